#pragma once
// Operators built from several bound operators: the factory adds inner nodes to the graph
// through the registry (so each piece keeps its own relaxation) and returns the last one.

#include <map>
#include <string>
#include <vector>

#include "lirpa/ops/registry.h"

namespace tessera::lirpa::detail {

/// A variable input reading node `id` of the graph being built.
NodeInput variable_input(const Graph& g, int id);

/// A constant input stored as "<parent>/<suffix>".
NodeInput constant_input(const OnnxNode& parent, const std::string& suffix, const at::Tensor& value);

/// Adds an `op_type` node built by the registry as an inner node of `parent`, named
/// "<parent>/<suffix>", reading `inputs`; returns its node id.
int add_inner_node(const OnnxNode& parent, const std::string& suffix, const std::string& op_type,
                   std::vector<NodeInput> inputs, std::map<std::string, AttrValue> attrs = {});

/// Builds `op_type` on `inputs` as the node that stands for `parent` itself.
BuiltOp build_as(const OnnxNode& parent, const std::string& op_type, std::vector<NodeInput> inputs,
                 std::map<std::string, AttrValue> attrs = {});

/// ONNX Div of two variables: x / y = x * Reciprocal(y).
BuiltOp build_variable_div(const OnnxNode& n);

}  // namespace tessera::lirpa::detail
