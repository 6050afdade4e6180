// ReLU splitting over several disjuncts at once (BabOptions::disjuncts_together): a domain's
// bound is its worst disjunct's best row (best_rows with groups), so a domain is closed only
// when every disjunct is infeasible there. Verdicts against properties whose answer is known:
// two disjuncts both infeasible (unsat, searched together and one after another), and one
// infeasible beside one that holds at a known point (never unsat: a search that closed a
// domain on one disjunct's bound alone would answer unsat), and a disjunct without output
// constraints (sat at once, without the attack; it used to end in a reshape error).

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "lirpa/bab/bab.h"
#include "random_nets.h"
#include "verify_cases.h"
#include "tessera/lirpa/verify.h"

namespace tessera::lirpa {
namespace {

using testing::frobenius_product;
using testing::num;

// The box [-1, 1]^2 over 2 inputs and 2 outputs, then `outputs`.
Property box2(const std::string& outputs) {
  std::string t = "(declare-const X_0 Real)\n(declare-const X_1 Real)\n(declare-const Y_0 Real)\n(declare-const Y_1 Real)\n";
  for (int i = 0; i < 2; ++i) t += "(assert (>= X_" + std::to_string(i) + " -1))\n(assert (<= X_" + std::to_string(i) + " 1))\n";
  return parse_vnnlib(t + outputs);
}

// Per output j of a random 2-input ReLU net: its CROWN lower bound on the box, a value certainly
// below its true minimum (a 801^2 grid's minimum less a Lipschitz bound times the spacing, 0.02
// more), the grid's minimum and a point where it is reached.
struct Output {
  double crown = 0, below = 0, grid_min = 0;
  at::Tensor argmin;
};

std::vector<Output> outputs_of(const Graph& g) {
  const int steps = 801;
  at::Tensor t = at::linspace(-1, 1, steps, at::kDouble);
  auto mesh = at::meshgrid({t, t}, "ij");
  at::Tensor x = at::stack({mesh[0].reshape({-1}), mesh[1].reshape({-1})}, 1);
  at::Tensor y = g.forward(x, at::kDouble);
  const double lip = frobenius_product(g, 3);  // >= the net's Lipschitz constant
  BoundOptions crown;
  at::Tensor lb = compute_bounds(g, -at::ones({2}, at::kDouble), at::ones({2}, at::kDouble), crown).lower;
  std::vector<Output> out;
  for (int64_t j = 0; j < y.size(1); ++j) {
    auto [m, i] = y.select(1, j).min(0);
    Output o;
    o.crown = lb[j].item<double>();
    o.grid_min = m.item<double>();
    o.below = o.grid_min - lip * 2.0 / (steps - 1) / std::sqrt(2.0) - 0.02;
    o.argmin = x[i.item<int64_t>()];
    out.push_back(o);
  }
  return out;
}

VerifyOptions relu_only(double timeout, bool together) {
  VerifyOptions o;
  o.timeout = timeout;
  o.bab.split = SplitKind::Relu;
  o.bab.disjuncts_together = together;
  o.alpha_enabled = false;  // the incomplete stage is CROWN: the thresholds lie above its bounds
  o.attack.enabled = false;  // the verdicts come from branch and bound
  return o;
}

}  // namespace

TEST(LirpaBestRows, TheWorstDisjunctsBestRowDecidesADomain) {
  // rows 0, 1 are disjunct 0; rows 2, 3 disjunct 1
  at::Tensor lb = at::tensor({1.0, -1.0, -2.0, 3.0,     // max 1 and 3: bound 1 (row 0)
                              -1.0, -2.0, 5.0, 0.0,     // max -1 and 5: bound -1 (row 0)
                              0.5, 2.0, -3.0, -0.25},   // max 2 and -0.25: bound -0.25 (row 3)
                             at::kDouble)
                      .reshape({3, 4});
  at::Tensor group = at::tensor({0, 0, 1, 1}, at::kLong);
  auto [rows, bound] = detail::best_rows(lb, group);
  EXPECT_TRUE(at::equal(rows, at::tensor({0, 0, 3}, at::kLong))) << rows;
  EXPECT_TRUE(at::equal(bound, at::tensor({1.0, -1.0, -0.25}, at::kDouble))) << bound;
  // one conjunction: the best row of all
  auto [all_rows, all_bound] = detail::best_rows(lb);
  EXPECT_TRUE(at::equal(all_rows, at::tensor({3, 2, 1}, at::kLong))) << all_rows;
  EXPECT_TRUE(at::equal(all_bound, at::tensor({3.0, 5.0, 2.0}, at::kDouble))) << all_bound;
}

TEST(LirpaVerify, DisjunctsSearchedTogetherDecideAsOneAfterAnother) {
  int tried = 0;
  for (uint64_t seed = 0; seed < 40 && tried < 2; ++seed) {
    at::manual_seed(seed);
    Graph g = load_onnx_bytes(testing::random_mlp(2, {16, 16}, 2, "Relu"));
    std::vector<Output> y = outputs_of(g);
    // CROWN alone must leave both outputs' thresholds open: a gap to work in
    if (!(y[0].crown < y[0].below - 0.05 && y[1].crown < y[1].below - 0.05)) continue;
    ++tried;
    // halfway from CROWN's bound to below the minimum: infeasible, closed only by splitting
    const double t0 = (y[0].crown + y[0].below) / 2, t1 = (y[1].crown + y[1].below) / 2;
    const Property unsat = box2("(assert (or (and (<= Y_0 " + num(t0) + ")) (and (<= Y_1 " + num(t1) + "))))");
    for (bool together : {true, false}) {
      VerifyResult r = verify(g, unsat, relu_only(60, together));
      EXPECT_EQ(r.verdict, Verdict::Unsat) << "seed " << seed << " together " << together << ": " << r.reason;
      EXPECT_EQ(r.decided_by, "bab-relu") << "seed " << seed;
    }
    // disjunct 0 infeasible, disjunct 1 holding near its minimum: never unsat
    const double hold = y[1].grid_min + 1e-4;
    const Property sat = box2("(assert (or (and (<= Y_0 " + num(t0) + ")) (and (<= Y_1 " + num(hold) + "))))");
    ASSERT_TRUE(check_counterexample(g, sat, y[1].argmin).has_value());
    VerifyResult s = verify(g, sat, relu_only(5, true));
    EXPECT_NE(s.verdict, Verdict::Unsat) << "seed " << seed << ": a domain closed on one disjunct's bound";
    if (s.verdict == Verdict::Sat) EXPECT_TRUE(check_counterexample(g, sat, s.counterexample->x).has_value());
  }
  EXPECT_EQ(tried, 2) << "too few seeds leave CROWN a gap on both outputs";
}

TEST(LirpaVerify, DisjunctWithoutOutputConstraintsIsSatWithoutTheAttack) {
  at::manual_seed(3);
  Graph g = load_onnx_bytes(testing::random_mlp(2, {8}, 2, "Relu"));
  // the second disjunct constrains only an input, which the whole box satisfies
  const Property p = box2("(assert (or (and (<= Y_0 -1000000)) (and (<= X_0 5))))");
  for (SplitKind split : {SplitKind::Relu, SplitKind::Input}) {
    for (bool together : {true, false}) {
      VerifyOptions o = relu_only(10, together);
      o.bab.split = split;
      VerifyResult r = verify(g, p, o);
      ASSERT_EQ(r.verdict, Verdict::Sat) << split_kind_name(split) << " together " << together << ": " << r.reason;
      EXPECT_TRUE(check_counterexample(g, p, r.counterexample->x).has_value());
    }
  }
}

}  // namespace tessera::lirpa
