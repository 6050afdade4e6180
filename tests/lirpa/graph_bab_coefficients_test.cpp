// The coefficients that graph branch and bound's bounding step returns with each domain's
// optimised bound (graph_domains.cpp): branching and vertex candidates read them.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "lirpa/bab/graph_bab.h"
#include "graph_bab_cases.h"
#include "graph_domains.h"

namespace tessera::lirpa {
namespace {

using detail::GraphBounded;
using detail::GraphDomains;
using testing::Case;
using testing::cases;
using testing::problem;
using testing::root_children;
using testing::root_children;
using testing::sample;
using testing::Samples;
using testing::satisfying;

// The input coefficients a returned with a domain's optimised bound are those of the pass
// whose bound is lb_recorded (the optimisation's last step, at most the best bound): the
// linear function lb_recorded + a (x - x*), x* the box's vertex minimising a x, is below
// c y - rhs at every sampled point that satisfies the domain's splits. CROWN's coefficients
// with the optimised bound (a higher constant than theirs) are not.
// With float32 steps (BetaOptions::float32_steps) the bound kept is that pass's own.
void expect_recorded_coefficients_bound(bool float32) {
  at::manual_seed(7);
  int64_t rows_checked = 0, below_best = 0;
  for (const Case& cs : cases()) {
    SCOPED_TRACE(cs.name);
    auto [g, relus, lo, hi, c, rhs] = problem(cs, 3);
    Samples s = sample(g, relus, lo, hi, 4000);
    GraphDomains kids = root_children(g, relus, lo, hi, c, rhs, 8);
    BetaOptions beta;
    beta.float32_steps = float32;
    GraphBounded opt = detail::bound_graph_domains(g, relus, kids, c, rhs, nullptr, &beta);
    GraphBounded crown = detail::bound_graph_domains(g, relus, kids, c, rhs);
    at::Tensor gs = at::matmul(s.y, c.t()) - rhs;  // [N, K]
    const int64_t k = c.size(0);
    for (int64_t b = 0; b < kids.size(); ++b) {
      at::Tensor idx = satisfying(relus, kids, b, s);
      if (idx.numel() == 0) continue;
      for (int64_t r = 0; r < k; ++r) {
        const double best = opt.lb[b][r].item<double>(), lb = opt.lb_recorded[b][r].item<double>();
        if (!std::isfinite(best) || best <= crown.lb[b][r].item<double>() + 1e-9) continue;  // not optimised further
        EXPECT_LE(lb, best) << "domain " << b << " row " << r;
        below_best += lb < best - 1e-9;
        at::Tensor a = opt.a_input[b][r];
        at::Tensor vertex = at::where(a > 0, lo.reshape({-1}), hi.reshape({-1}));
        at::Tensor line = lb + at::matmul(s.x.index_select(0, idx) - vertex, a);
        at::Tensor gap = gs.index_select(0, idx).select(1, r) - line;
        EXPECT_GE(gap.min().item<double>(), -1e-8) << "domain " << b << " row " << r;
        ++rows_checked;
      }
    }
  }
  EXPECT_GT(rows_checked, 10) << "too few optimised rows: the test shows nothing";
  // the last step, not each row's best: some rows' last step is below their best (float64),
  // the bound kept (float32)
  if (float32) {
    EXPECT_EQ(below_best, 0);
  } else {
    EXPECT_GT(below_best, 0);
  }
}

TEST(LirpaGraphBab, RecordedCoefficientsAreTheOptimisedBounds) {
  expect_recorded_coefficients_bound(false);
}

TEST(LirpaGraphBab, RecordedCoefficientsAreTheFloat32StepsBounds) {
  expect_recorded_coefficients_bound(true);
}

}  // namespace
}  // namespace tessera::lirpa
