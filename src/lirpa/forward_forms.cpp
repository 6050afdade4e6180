// Forward linear bounds over the input box (BoundOp::forward_forms): the input as
// x = centre + radius e, e in [-1, 1]^n, each node's lower and upper affine forms in e
// carried forward through the operators that have them.

#include <ATen/ATen.h>

#include "propagation.h"

namespace tessera::lirpa::detail {

LinearForms input_forms(const Interval& box) {
  const int64_t domains = box.lower.size(0), n = box.lower[0].numel();
  at::Tensor centre = ((box.lower + box.upper) / 2).reshape({domains, 1, n});
  at::Tensor radius = ((box.upper - box.lower) / 2).reshape({domains, n});
  at::Tensor f = at::cat({at::diag_embed(radius), centre}, 1);  // x_i = radius_i e_i + centre_i
  std::vector<int64_t> shape = box.lower.sizes().vec();
  shape.insert(shape.begin() + 1, n + 1);  // [D, n + 1, *input_shape]
  f = f.reshape(shape);
  return {f, f};
}

Interval concretise(const LinearForms& f) {
  const int64_t n = f.lower.size(1) - 1;
  // min over e of c e + k = k - sum_i |c_i|; max = k + sum_i |c_i|
  return {f.lower.select(1, n) - f.lower.narrow(1, 0, n).abs().sum(1),
          f.upper.select(1, n) + f.upper.narrow(1, 0, n).abs().sum(1)};
}

std::optional<LinearForms> node_forms(const Graph& graph, const std::vector<std::optional<LinearForms>>& forms,
                                      const std::vector<std::optional<Interval>>& bounds, const OpEnv& env, int id) {
  const Node& node = graph.node(id);
  std::vector<LinearForms> in;
  std::vector<Interval> in_bounds;
  for (int i : node.inputs) {
    if (!forms[i]) return std::nullopt;
    in.push_back(*forms[i]);
    if (node.op->needs_input_bounds()) {
      if (!bounds[i]) return std::nullopt;
      in_bounds.push_back(*bounds[i]);
    }
  }
  try {
    return node.op->forward_forms(env, in, in_bounds);
  } catch (const c10::Error&) {
    // a shape the operator's forms do not handle (a constant broadcast with more dimensions
    // than the node): no forms, the nodes after it keep interval bounds (sound either way)
    return std::nullopt;
  }
}

Interval intersect_forms(const Interval& ref, const LinearForms& f) {
  Interval c = concretise(f);
  // both sound; fmax / fmin ignore a NaN end (an overflowed form proves nothing), and the
  // result is never empty: where they do not overlap it is rounding, not infeasibility
  at::Tensor l = at::fmax(ref.lower, c.lower);
  return {l, at::fmax(at::fmin(ref.upper, c.upper), l)};
}

}  // namespace tessera::lirpa::detail
