#pragma once
// Helpers shared by the bound operators.

#include <ATen/ATen.h>

#include <vector>

#include "tessera/lirpa/bound_op.h"

namespace tessera::lirpa::detail {

/// {n, shape...}
inline std::vector<int64_t> with_lead(int64_t n, const std::vector<int64_t>& shape) {
  std::vector<int64_t> s{n};
  s.insert(s.end(), shape.begin(), shape.end());
  return s;
}

/// Shape of a batched tensor without its leading dimension.
inline std::vector<int64_t> tail_shape(const at::Tensor& t) {
  auto s = t.sizes().vec();
  return {s.begin() + 1, s.end()};
}

/// Center and radius of an interval.
inline at::Tensor center(const Interval& b) { return (b.lower + b.upper) / 2; }
inline at::Tensor radius(const Interval& b) { return (b.upper - b.lower) / 2; }

/// Sums a broadcast result back onto `shape` (the leading row dimension kept).
inline at::Tensor sum_to_rows(const at::Tensor& a, const std::vector<int64_t>& shape) {
  auto target = with_lead(a.size(0), shape);
  if (a.sizes().vec() == target) return a;
  return at::sum_to(a, target);
}

/// A linear relaxation of an elementwise function y = f(x) on the input bounds:
/// lower_d x + lower_b <= f(x) <= upper_d x + upper_b. Each tensor broadcasts against the
/// A matrix `[S, *shape]` (`[1, *shape]` or, for per-row slopes, `[S, *shape]`).
struct Relaxation {
  at::Tensor lower_d, lower_b, upper_d, upper_b;
};

/// The backward step of an elementwise relaxation, shared by every activation: for a
/// lower bound of A y, positive entries of A take the lower line, negative ones the upper:
/// A_x = A+ lower_d + A- upper_d,  bias = sum(A+ lower_b + A- upper_b).
inline Backward relaxed_backward(const APtr& a, const Relaxation& r, at::ScalarType dtype) {
  RelaxedRows out = a->relax({r.lower_d, r.lower_b, r.upper_d, r.upper_b}, dtype);
  return Backward{{out.a}, out.bias};
}

/// Merges leading dims so that the last `k` dims remain: [N, ..., d1..dk] -> [M, d1..dk].
inline at::Tensor merge_lead(const at::Tensor& x, int k) {
  std::vector<int64_t> s{-1};
  auto sz = x.sizes().vec();
  s.insert(s.end(), sz.end() - k, sz.end());
  return x.reshape(s);
}

}  // namespace tessera::lirpa::detail
