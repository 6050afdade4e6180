#pragma once
// The ReLU-splitting instance of the sharded verification tests: y_0 <= t over a box around
// a random point (seed 7, the same on every rank), t at `fraction` of the way from the
// search root's bound of y_0 (CROWN, final slopes optimised) to its sampled minimum (< 1:
// unsat, branching must prove it; > 1: sat).

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <vector>

#include "lirpa/bab/graph_bab.h"
#include "lirpa/graph_domains.h"
#include "tessera/lirpa/graph.h"
#include "tessera/lirpa/verify.h"

namespace tessera::lirpa::testing {

inline Property relu_split_property(const Graph& whole, double fraction) {
  at::manual_seed(7);  // the same box and samples on every rank
  at::Tensor x0 = at::randn({whole.input_size()}, at::kDouble) * 0.5;
  at::Tensor lo = x0 - 0.3, hi = x0 + 0.3;
  at::Tensor c = at::zeros({1, whole.output_size()}, at::kDouble);
  c[0][0] = 1.0;
  const std::vector<detail::GraphRelu> relus = detail::graph_relus(whole);
  const BetaOptions beta;
  const double root = detail::bound_graph_domains(whole, relus, root_domain(lo, hi, relus), c,
                                                  at::zeros({1}, at::kDouble), nullptr, &beta)
                          .lb.item<double>();
  at::Tensor x = lo + (hi - lo) * at::rand({4096, lo.numel()}, at::kDouble);
  const double sampled = at::matmul(whole.forward(x, at::kDouble), c.t()).min().item<double>();
  EXPECT_LT(root, sampled);
  Property property{whole.input_size(), whole.output_size(), {}};
  const double t = root + fraction * (sampled - root);  // unsafe region: y_0 <= t
  property.cases.push_back(PropertyCase{lo, hi, {OutputConjunction{c, at::full({1}, t, at::kDouble)}}});
  return property;
}

}  // namespace tessera::lirpa::testing
