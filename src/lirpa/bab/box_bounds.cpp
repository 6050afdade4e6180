// Bounds of input boxes on the graph engine; see box_bounds.h.

#include "lirpa/bab/box_bounds.h"

#include <ATen/ATen.h>

namespace tessera::lirpa::detail {

GraphDomains box_domains(const std::vector<GraphRelu>& relus, const at::Tensor& xl, const at::Tensor& xu,
                         const LayerBounds* layers) {
  GraphDomains d;
  d.xl = xl, d.xu = xu, d.root = at::arange(xl.size(0), at::kLong);  // box b is domain b's root
  for (const GraphRelu& r : relus) d.split.push_back(at::zeros({xl.size(0), r.size}, at::kChar));
  if (layers && !layers->lower.empty()) d.lower = layers->lower, d.upper = layers->upper;
  return d;
}

GraphBounded bound_box_domains(const Graph& graph, const std::vector<GraphRelu>& relus, const at::Tensor& xl,
                               const at::Tensor& xu, const at::Tensor& c, const at::Tensor& rhs,
                               const LayerBounds* parent) {
  GraphDomains d = box_domains(relus, xl, xu, parent);  // the parent's bounds as limits
  d.intersect_padding = true;
  return bound_graph_domains(graph, relus, d, c, rhs);
}

at::Tensor conjunction_lower_bound(const at::Tensor& lb, const at::Tensor& a, const at::Tensor& xl,
                                   const at::Tensor& xu, int iterations) {
  at::NoGradGuard no_grad;
  at::Tensor best = std::get<0>(lb.max(1));  // the corners lambda = e_k
  const int64_t k = lb.size(1);
  if (k < 2 || lb.size(0) == 0) return best;
  at::Tensor finite = at::isfinite(lb).all(1);
  at::Tensor centre = (xl + xu) / 2, radius = (xu - xl) / 2;
  // g_k(x) >= a_k x + d_k with d_k = lb_k - min_box a_k x = lb_k - (a_k centre - |a_k| radius)
  at::Tensor d = lb - at::bmm(a, centre.unsqueeze(2)).squeeze(2) + at::bmm(a.abs(), radius.unsqueeze(2)).squeeze(2);
  d = at::where(finite.unsqueeze(1), d, at::zeros_like(d));  // boxes with an infinite row keep `best`
  at::Tensor lam = at::full_like(lb, 0.5 / k).scatter_add_(1, lb.argmax(1, true), at::full_like(best, 0.5).unsqueeze(1));
  double eta = 2.0;
  for (int t = 0; t < iterations; ++t) {
    at::Tensor s = at::bmm(lam.unsqueeze(1), a).squeeze(1);                      // s = sum_k lam_k a_k
    at::Tensor x = at::where(s > 0, xl, xu);                                     // argmin_box s x
    at::Tensor g = d + at::bmm(a, x.unsqueeze(2)).squeeze(2);                    // g_k = a_k x* + d_k
    at::Tensor val = (lam * g).sum(1) / lam.sum(1);                              // min_x sum lam_k (a_k x + d_k)
    best = at::where(finite, at::max(best, val), best);
    // exponentiated-gradient ascent on the simplex (the gradient of the concave dual is g)
    at::Tensor gmax = std::get<0>(g.max(1, true)), span = gmax - std::get<0>(g.min(1, true)) + 1e-12;
    lam = lam * at::exp(eta * (g - gmax) / span);
    lam = lam / lam.sum(1, true);
    eta *= 0.9;
  }
  return best;
}

at::Tensor alpha_conjunction_bound(const Graph& graph, const std::vector<GraphRelu>& relus, const at::Tensor& xl,
                                   const at::Tensor& xu, const at::Tensor& c, const at::Tensor& rhs,
                                   const LayerBounds& layers, const BetaOptions& steps,
                                   const std::function<bool()>& stop) {
  // every ReLU input's bounds taken as they are (reused up to the last ReLU node); with no
  // split the steps optimise the final rows' slopes alone
  GraphDomains d = box_domains(relus, xl, xu, &layers);
  d.reuse_upto = at::full({xl.size(0)}, static_cast<int64_t>(relus.size()) - 1, at::kLong);
  GraphBounded g = bound_graph_domains(graph, relus, d, c, rhs, nullptr, &steps, stop);
  // lb: each row's best over the steps; lb_recorded and a_input: the last step's pass
  return at::max(std::get<0>(g.lb.max(1)), conjunction_lower_bound(g.lb_recorded, g.a_input, xl, xu));
}

}  // namespace tessera::lirpa::detail
