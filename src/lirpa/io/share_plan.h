#pragma once
// Loading one rank's share of a network split into tensor-parallel zones (heads_split.cpp
// plans it, onnx_loader.cpp applies it), and what the loader saw of each ONNX node, which
// the planner reads.

#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lirpa/ops/registry.h"
#include "tessera/lirpa/graph.h"

namespace tessera::dist {
class Communicator;
}

namespace tessera::lirpa::detail {

/// One rank's share: which constants of which ONNX nodes it keeps part of, the Reshape
/// targets of its shares' shapes, and where the zones' edges go.
struct SharePlan {
  std::shared_ptr<dist::Communicator> comm;
  /// Keep the entries `index` along `axis` of the constant input `input`.
  struct ConstSlice {
    size_t input = 0;
    int64_t axis = 0;
    at::Tensor index;
  };
  std::map<std::string, std::vector<ConstSlice>> slices;  // ONNX node name -> its constants' slices
  std::map<std::string, std::vector<int64_t>> reshapes;   // Reshape node -> the share's target shape
  std::map<std::string, int> enter;                       // node whose variable inputs enter a zone
  std::map<std::string, int> sum_after;                   // node whose output every rank sums
};

/// One ONNX node as the loader built it: value names, the graph node of each variable input
/// and output (-1: a constant), the inputs' shapes.
struct LoadedNode {
  std::string op_type, name;
  std::map<std::string, AttrValue> attrs;
  std::vector<std::string> inputs, outputs;
  std::vector<int> input_nodes, output_nodes;
  std::vector<std::vector<int64_t>> input_shapes;
};

/// Zones the planner found.
struct ZoneCounts {
  int attention = 0, mlp = 0;
};

/// Rank `comm->rank()`'s share of every zone of the network whose whole graph and trace
/// (LoadedNode) are given: attention blocks whose heads split evenly over the ranks, then MLP
/// blocks; what no zone covers stays whole on every rank.
SharePlan plan_shares(const Graph& whole, const std::vector<LoadedNode>& trace,
                      const std::shared_ptr<dist::Communicator>& comm, ZoneCounts* counts = nullptr);

}  // namespace tessera::lirpa::detail
