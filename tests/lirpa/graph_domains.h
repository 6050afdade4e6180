#pragma once
// Graph branch-and-bound domains for tests: the root of a box, random children of it, and
// sampled points of a box with the values of each ReLU node's input.

#include <ATen/ATen.h>

#include <vector>

#include "lirpa/bab/graph_bab.h"
#include "random_nets.h"

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

/// n random children (random_children) of the root of [lo, hi], bounded by CROWN first.
inline detail::GraphDomains root_children(const Graph& g, const std::vector<detail::GraphRelu>& relus,
                                          const at::Tensor& lo, const at::Tensor& hi, const at::Tensor& c,
                                          const at::Tensor& rhs, int64_t n) {
  detail::GraphBounded gr = detail::bound_graph_domains(g, relus, root_domain(lo, hi, relus), c, rhs);
  return random_children(gr, relus, lo, hi, n);
}

/// Sampled points of a box and their node values.
struct Samples {
  at::Tensor x, y;               // [N, n_in], [N, n_out]
  std::vector<at::Tensor> z;     // per ReLU node: its input's values [N, n_j]
};

inline Samples sample(const Graph& g, const std::vector<detail::GraphRelu>& relus, const at::Tensor& lo, const at::Tensor& hi,
               int64_t n) {
  at::Tensor x = lo + (hi - lo) * at::rand({n, lo.numel()}, at::kDouble);
  x = at::cat({x, at::where(at::rand({n / 8, lo.numel()}, at::kDouble) > 0.5, hi, lo)});  // vertices too
  std::vector<at::Tensor> v = node_values(g, x);
  Samples s{x, v[g.output_id()].reshape({x.size(0), -1}), {}};
  for (const detail::GraphRelu& r : relus) s.z.push_back(v[r.input].reshape({x.size(0), -1}));
  return s;
}

/// The sampled points that satisfy the splits of domain `b` of `d` ([M] long).
inline at::Tensor satisfying(const std::vector<detail::GraphRelu>& relus, const detail::GraphDomains& d, int64_t b, const Samples& s) {
  at::Tensor keep = at::ones({s.x.size(0)}, at::kBool);
  for (size_t j = 0; j < relus.size(); ++j) {
    at::Tensor sp = d.split[j][b].unsqueeze(0);
    keep = keep.logical_and(((s.z[j] >= 0).logical_or(sp != 1)).all(1));
    keep = keep.logical_and(((s.z[j] <= 0).logical_or(sp != -1)).all(1));
  }
  return at::nonzero(keep).reshape({-1});
}

}  // namespace tessera::lirpa::testing
