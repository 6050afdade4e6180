// Operators composed of others when the model loads:
//   Div(x, y)        = x * Reciprocal(y)                     (y > 0 on its bounds)
//   Softmax(x)_i     = Reciprocal(sum_j exp(x_j - x_i))      (over the last axis)
//   LayerNormalization(x, g, b) = d * Reciprocal(Sqrt(mean(d^2) + eps)) * g + b,
//                      d = x - mean(x)                       (means over axis..last)
// Each piece keeps its own sound relaxation (Exp, ReduceSum, Reciprocal, the bilinear Mul),
// so the composition is sound.
// Softmax: e^{x_i} / sum_j e^{x_j} = 1 / sum_j e^{x_j - x_i}, exactly, for every x. Each
// difference x_j - x_i (PairwiseDifference) is one node that CROWN bounds as a whole, so the
// parts of x_j and x_i that move together cancel (bounds of x_j minus bounds of x_i do not);
// e^{x_i - x_i} = 1 exactly, so the sum is >= 1 and its reciprocal in (0, 1]; no product of
// two bounded variables (McCormick planes) is needed, and no shift against overflow. On the
// VNN-COMP ViT this is tighter than e^{x_i - x_k} / sum_j e^{x_j - x_k} with k the largest
// score and a McCormick product (auto_LiRPA's form). The price: T^2 exponentials per row of T
// entries instead of T.

#include "lirpa/ops/composite.h"

#include <ATen/ATen.h>

#include "lirpa/ops/pairwise_difference.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

NodeInput variable_input(const Graph& g, int id) {
  NodeInput in;
  in.node = id;
  in.shape = g.node(id).shape;
  return in;
}

NodeInput constant_input(const OnnxNode& parent, const std::string& suffix, const at::Tensor& value) {
  NodeInput in;
  in.key = parent.put(suffix, value);
  in.value = value;
  in.shape = value.sizes().vec();
  return in;
}

namespace {

OnnxNode child(const OnnxNode& parent, const std::string& name, const std::string& op_type,
               std::vector<NodeInput> inputs, std::map<std::string, AttrValue> attrs) {
  OnnxNode n;
  n.op_type = op_type;
  n.name = name;
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  n.params = parent.params;
  n.graph = parent.graph;
  return n;
}

BuiltOp build_child(const OnnxNode& n) {
  const OpFactory* factory = default_registry().find(n.op_type);
  TESSERA_CHECK(factory != nullptr, Unsupported, "node '", n.name, "' needs operator ", n.op_type,
                ", which this build does not have");
  return (*factory)(n);
}

}  // namespace

int add_inner_node(const OnnxNode& parent, const std::string& suffix, const std::string& op_type,
                   std::vector<NodeInput> inputs, std::map<std::string, AttrValue> attrs) {
  TESSERA_CHECK(parent.graph != nullptr, InvalidInput, "node '", parent.name, "': no graph to add inner nodes to");
  OnnxNode n = child(parent, parent.name + "/" + suffix, op_type, std::move(inputs), std::move(attrs));
  BuiltOp built = build_child(n);
  return parent.graph->add_node(n.name, built.op, built.inputs);
}

BuiltOp build_as(const OnnxNode& parent, const std::string& op_type, std::vector<NodeInput> inputs,
                 std::map<std::string, AttrValue> attrs) {
  return build_child(child(parent, parent.name, op_type, std::move(inputs), std::move(attrs)));
}

BuiltOp build_variable_div(const OnnxNode& n) {
  const Graph& g = *n.graph;
  int r = add_inner_node(n, "reciprocal", "Reciprocal", {n.inputs.at(1)});  // r = 1 / y
  return build_as(n, "Mul", {n.inputs.at(0), variable_input(g, r)});         // x * r
}

void register_softmax(OpRegistry& reg) {
  reg.add("Softmax", [](const OnnxNode& n) -> BuiltOp {
    TESSERA_CHECK(n.graph != nullptr && n.inputs.size() == 1 && !n.inputs[0].is_const(), InvalidInput,
                  "Softmax node '", n.name, "' needs one variable input");
    const NodeInput& x = n.inputs[0];
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = n.attr_int("axis", -1);
    if (axis < 0) axis += rank;
    // before opset 13 Softmax normalises over all axes from `axis` on; both agree on the last
    TESSERA_CHECK(axis == rank - 1, Unsupported, "Softmax node '", n.name, "': only the last axis (",
                  rank - 1, ") is supported, not ", n.attr_int("axis", -1));
    const Graph& g = *n.graph;
    AttrValue last;
    last.ints = {rank};  // d's last axis (j)
    AttrValue drop;
    drop.i = 0;
    int d = n.graph->add_node(n.name + "/differences", make_pairwise_difference(), {x.node});  // d_ij = x_j - x_i
    int e = add_inner_node(n, "exp", "Exp", {variable_input(g, d)});                            // e_ij = exp(d_ij)
    int s = add_inner_node(n, "sum", "ReduceSum", {variable_input(g, e)}, {{"axes", last}, {"keepdims", drop}});  // s_i = sum_j e_ij
    return build_as(n, "Reciprocal", {variable_input(g, s)});                                   // y_i = 1 / s_i
  });
}

void register_layer_norm(OpRegistry& reg) {
  reg.add("LayerNormalization", [](const OnnxNode& n) -> BuiltOp {
    TESSERA_CHECK(n.graph != nullptr && n.inputs.size() >= 2 && !n.inputs[0].is_const() && n.inputs[1].is_const() &&
                      (n.inputs.size() < 3 || n.inputs[2].is_const()),
                  Unsupported, "LayerNormalization node '", n.name,
                  "': needs a variable input with a constant scale and bias");
    const NodeInput& x = n.inputs[0];
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = n.attr_int("axis", -1);
    if (axis < 0) axis += rank;
    TESSERA_CHECK(axis >= 0 && axis < rank, ParseError, "LayerNormalization node '", n.name, "': axis ",
                  n.attr_int("axis", -1), " is outside a tensor of rank ", rank);
    AttrValue axes;
    for (int64_t i = axis; i < rank; ++i) axes.ints.push_back(i);
    const Graph& g = *n.graph;
    auto var = [&](int id) { return variable_input(g, id); };
    const double eps = n.attr_float("epsilon", 1e-5);
    int m = add_inner_node(n, "mean", "ReduceMean", {x}, {{"axes", axes}});                      // m = mean(x)
    int d = add_inner_node(n, "centred", "Sub", {x, var(m)});                                    // d = x - m
    int sq = add_inner_node(n, "square", "Pow", {var(d), constant_input(n, "two", at::scalar_tensor(2.0, at::kDouble))});
    int v = add_inner_node(n, "variance", "ReduceMean", {var(sq)}, {{"axes", axes}});            // v = mean(d^2)
    int ve = add_inner_node(n, "variance_eps", "Add", {var(v), constant_input(n, "eps", at::scalar_tensor(eps, at::kDouble))});
    int sd = add_inner_node(n, "std", "Sqrt", {var(ve)});                                         // sqrt(v + eps)
    int r = add_inner_node(n, "reciprocal", "Reciprocal", {var(sd)});
    int z = add_inner_node(n, "normalised", "Mul", {var(d), var(r)});                            // z = d / sqrt(v + eps)
    if (n.inputs.size() < 3) return build_as(n, "Mul", {var(z), n.inputs[1]});                   // z g
    int zg = add_inner_node(n, "scaled", "Mul", {var(z), n.inputs[1]});
    return build_as(n, "Add", {var(zg), n.inputs[2]});                                            // z g + b
  });
}

}  // namespace tessera::lirpa::detail
