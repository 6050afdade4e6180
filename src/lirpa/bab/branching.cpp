// Input-space branching helpers: best rows, smear heuristic, bisection, minimising vertex.

#include <ATen/ATen.h>

#include <limits>

#include "lirpa/bab/bab.h"

namespace tessera::lirpa::detail {

std::pair<at::Tensor, at::Tensor> best_rows(const at::Tensor& lb, const at::Tensor& group) {
  if (!group.defined()) {
    auto [v, i] = lb.max(1);
    return {i, v};
  }
  const int64_t groups = group.max().item<int64_t>() + 1;
  at::Tensor member = group.view({1, -1}) == at::arange(groups, group.options()).view({-1, 1});   // [G, K]
  at::Tensor off = at::full({}, -std::numeric_limits<double>::infinity(), lb.options());
  auto [best, row] = at::where(member.unsqueeze(0), lb.unsqueeze(1), off).max(2);   // [B, G]: max_{k in g} lb_k
  auto [worst, g] = best.min(1);                                                   // min_g
  return {row.gather(1, g.unsqueeze(1)).squeeze(1), worst};
}

namespace {
// a[b, rows[b], :] -> [B, n]
at::Tensor pick_rows(const at::Tensor& a, const at::Tensor& rows) {
  return a.gather(1, rows.view({-1, 1, 1}).expand({a.size(0), 1, a.size(2)})).squeeze(1);
}
}  // namespace

at::Tensor smear_dimension(const at::Tensor& a, const at::Tensor& rows, const at::Tensor& xl, const at::Tensor& xu) {
  at::Tensor s = pick_rows(a, rows).abs() * (xu - xl);  // smear_i = |a_i| (u_i - l_i)
  // a zero smear everywhere (a constant bound): split the widest dimension
  at::Tensor flat = (std::get<0>(s.max(1)) <= 0).unsqueeze(1);
  s = at::where(flat, xu - xl, s);
  return s.argmax(1);
}

std::pair<at::Tensor, at::Tensor> bisect(const at::Tensor& xl, const at::Tensor& xu, const at::Tensor& dims) {
  at::Tensor idx = dims.view({-1, 1});
  at::Tensor lo = xl.gather(1, idx), hi = xu.gather(1, idx);
  at::Tensor mid = at::min(at::max((lo + hi) / 2, lo), hi);  // l <= mid <= u in floating point
  at::Tensor u1 = xu.clone().scatter_(1, idx, mid);         // [l, mid]
  at::Tensor l2 = xl.clone().scatter_(1, idx, mid);         // [mid, u]
  return {at::cat({xl, l2}), at::cat({u1, xu})};
}

at::Tensor minimising_vertex(const at::Tensor& a, const at::Tensor& rows, const at::Tensor& xl, const at::Tensor& xu) {
  at::Tensor ar = pick_rows(a, rows);
  return at::where(ar > 0, xl, xu);  // argmin over the box of a x
}

}  // namespace tessera::lirpa::detail
