#pragma once
// Graph branch-and-bound domains for tests: the root of a box, and random children of it.

#include <ATen/ATen.h>

#include <vector>

#include "lirpa/bab/graph_bab.h"

namespace tessera::lirpa::testing {

/// The root domain of the box [lo, hi]: no split.
inline detail::GraphDomains root_domain(const at::Tensor& lo, const at::Tensor& hi,
                                        const std::vector<detail::GraphRelu>& relus) {
  detail::GraphDomains d;
  d.xl = lo;
  d.xu = hi;
  for (const detail::GraphRelu& r : relus) d.split.push_back(at::zeros({1, r.size}, at::kChar));
  return d;
}

/// n children of the root bounded as `gr`: each splits a random unstable neuron of a random
/// ReLU node, active and inactive in turn, and inherits the root's bounds (reused up to the
/// split node).
inline detail::GraphDomains random_children(const detail::GraphBounded& gr, const std::vector<detail::GraphRelu>& relus,
                                            const at::Tensor& lo, const at::Tensor& hi, int64_t n) {
  detail::GraphDomains kids;
  kids.xl = lo;
  kids.xu = hi;
  kids.reuse_upto = at::zeros({n}, at::kLong);
  for (size_t j = 0; j < relus.size(); ++j) {
    kids.split.push_back(at::zeros({n, relus[j].size}, at::kChar));
    kids.lower.push_back(gr.bounds.lower[j].repeat({n, 1}));
    kids.upper.push_back(gr.bounds.upper[j].repeat({n, 1}));
  }
  for (int64_t b = 0; b < n; ++b) {
    int64_t j = at::randint(static_cast<int64_t>(relus.size()), {1}, at::kLong).item<int64_t>();
    at::Tensor unstable = at::nonzero((gr.bounds.lower[j][0] < 0).logical_and(gr.bounds.upper[j][0] > 0)).reshape({-1});
    if (unstable.numel() == 0) continue;
    int64_t i = unstable[at::randint(unstable.numel(), {1}, at::kLong).item<int64_t>()].item<int64_t>();
    kids.split[j][b][i] = b % 2 == 0 ? 1 : -1;
    kids.reuse_upto[b] = j;
  }
  return kids;
}

}  // namespace tessera::lirpa::testing
