#pragma once
/// @file graph.h
/// A network as a graph of bound operators.
///
/// Nodes are stored in topological order; node 0 is the single network input. Constants
/// are not nodes: they live in the graph's `ParamStore` and operators refer to them by key.
///
/// @code
///   Graph g = tessera::lirpa::load_onnx("net.onnx");
///   at::Tensor y = g.forward(x, at::kDouble);   // x: [N, *g.input_shape()]
/// @endcode

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "tessera/lirpa/bound_op.h"
#include "tessera/lirpa/param_store.h"

namespace tessera::lirpa {

/// One operator application.
struct Node {
  int id = 0;
  std::string name;                    ///< ONNX node name (or a generated one)
  std::shared_ptr<const BoundOp> op;   ///< null for the input node
  std::vector<int> inputs;             ///< ids of the variable inputs
  std::vector<int64_t> shape;          ///< static output shape (ONNX shape, batch included)
  /// The tensor-parallel zone whose share this node holds (BoundOp::zone_edge: from its
  /// `enter` edge up to the input of its `sum` edge), or -1: the whole value, on every rank.
  int zone = -1;
};

/// A network: nodes in topological order, one input, one output, and the constants.
class Graph {
 public:
  explicit Graph(std::shared_ptr<ParamStore> params);

  /// Adds the input node (must be first).
  int add_input(std::string name, std::vector<int64_t> shape);
  /// Adds a node; its shape is inferred by running `forward` on zeros.
  int add_node(std::string name, std::shared_ptr<const BoundOp> op, std::vector<int> inputs);
  void set_output(int id);

  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(int id) const { return nodes_.at(id); }
  int input_id() const { return 0; }
  int output_id() const { return output_; }
  const std::vector<int64_t>& input_shape() const { return nodes_.at(0).shape; }
  const std::vector<int64_t>& output_shape() const { return nodes_.at(output_).shape; }
  int64_t input_size() const;
  int64_t output_size() const;
  ParamStore& params() const { return *params_; }
  std::shared_ptr<ParamStore> params_ptr() const { return params_; }
  /// Swaps the parameter store (e.g. for a sharded one); `params` must hold every key.
  void set_params(std::shared_ptr<ParamStore> params);

  /// Network output for a batch of inputs `x` `[N, *input_shape]` (or `[N, input_size]`),
  /// returned as `[N, output_size]`.
  at::Tensor forward(const at::Tensor& x, at::ScalarType dtype) const;
  /// Consumers of each node.
  std::vector<std::vector<int>> consumers() const;

 private:
  int zone_of(const std::string& name, const BoundOp& op, const std::vector<int>& inputs) const;

  std::shared_ptr<ParamStore> params_;
  std::vector<Node> nodes_;
  int output_ = -1;
};

}  // namespace tessera::lirpa
