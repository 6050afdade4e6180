// Complete verification: counterexample checking, the results file, verdicts on small
// networks whose answer is known by construction, and a property with a counterexample
// that must never be answered unsat.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "random_nets.h"
#include "verify_cases.h"
#include "tessera/lirpa/verify.h"

namespace tessera::lirpa {
namespace {

using testing::frobenius_product;
using testing::num;

// y = 2 x0 - x1 as a one-layer network.
Graph linear_net() {
  OnnxBuilder b("x", {1, 2});
  auto w = b.constant("w", at::tensor({2.0, -1.0}, at::kDouble).reshape({1, 2}));
  b.set_output(b.node("Gemm", {b.input(), w}, {OnnxAttr::integer("transB", 1)}));
  return load_onnx_bytes(b.bytes());
}

Property box_property(const std::string& outputs, int n_in, int n_out, double lo = -1, double hi = 1) {
  std::string t;
  for (int i = 0; i < n_in; ++i) t += "(declare-const X_" + std::to_string(i) + " Real)\n";
  for (int i = 0; i < n_out; ++i) t += "(declare-const Y_" + std::to_string(i) + " Real)\n";
  for (int i = 0; i < n_in; ++i) {
    t += "(assert (>= X_" + std::to_string(i) + " " + std::to_string(lo) + "))\n";
    t += "(assert (<= X_" + std::to_string(i) + " " + std::to_string(hi) + "))\n";
  }
  return parse_vnnlib(t + outputs);
}

// min of y_0 over [-1, 1]^2 by a fine grid, and a Lipschitz constant bound L (product of
// the layers' spectral norms), so that the true minimum lies in [grid_min - L h, grid_min].
std::pair<double, double> grid_minimum(const Graph& g, int steps) {
  at::Tensor t = at::linspace(-1, 1, steps, at::kDouble);
  auto mesh = at::meshgrid({t, t}, "ij");
  at::Tensor x = at::stack({mesh[0].reshape({-1}), mesh[1].reshape({-1})}, 1);
  double m = g.forward(x, at::kDouble).select(1, 0).min().item<double>();
  return {m, 2.0 / (steps - 1) / std::sqrt(2.0)};
}

VerifyOptions quick(double timeout, SplitKind split) {
  VerifyOptions o;
  o.timeout = timeout;
  o.bab.split = split;
  o.attack.restarts = 8;
  o.attack.steps = 20;
  return o;
}

}  // namespace

TEST(LirpaVerify, CounterexampleCheckedByForwardPass) {
  Graph g = linear_net();
  Property p = box_property("(assert (<= Y_0 -2.5))", 2, 1);
  auto ce = check_counterexample(g, p, at::tensor({-1.0, 1.0}, at::kDouble));  // y = -3
  ASSERT_TRUE(ce.has_value());
  EXPECT_DOUBLE_EQ(ce->y.item<double>(), -3.0);
  EXPECT_FALSE(check_counterexample(g, p, at::tensor({0.0, 0.0}, at::kDouble)));   // y = 0 > -2.5
  EXPECT_FALSE(check_counterexample(g, p, at::tensor({-2.0, 1.0}, at::kDouble)));  // outside the box
  EXPECT_FALSE(check_counterexample(g, p, at::tensor({NAN, 1.0}, at::kDouble)));
  // disjunction: the second conjunction holds
  Property q = box_property("(assert (or (and (>= Y_0 5)) (and (<= Y_0 0.5) (>= Y_0 -0.5))))", 2, 1);
  auto ce2 = check_counterexample(g, q, at::tensor({0.1, 0.0}, at::kDouble));
  ASSERT_TRUE(ce2.has_value());
  EXPECT_EQ(ce2->disjunct_index, 1);
}

TEST(LirpaVerify, ResultsFileFormat) {
  VerifyResult r;
  r.verdict = Verdict::Sat;
  r.counterexample = Counterexample{at::tensor({0.5, -1.0}, at::kDouble), at::tensor({2.0}, at::kDouble), 0, 0};
  EXPECT_EQ(results_text(r), "sat\n((X_0 0.5)\n (X_1 -1)\n (Y_0 2))\n");
  r.verdict = Verdict::Unsat;
  EXPECT_EQ(results_text(r), "unsat\n");
  r.verdict = Verdict::Timeout;
  EXPECT_EQ(results_text(r), "timeout\n");
}

TEST(LirpaVerify, LinearNetDecidedByAttackAndCrown) {
  Graph g = linear_net();
  VerifyResult sat = verify(g, box_property("(assert (<= Y_0 -2.9))", 2, 1), quick(10, SplitKind::Auto));
  ASSERT_EQ(sat.verdict, Verdict::Sat);
  EXPECT_LE(sat.counterexample->y.item<double>(), -2.9);
  VerifyResult unsat = verify(g, box_property("(assert (<= Y_0 -3.1))", 2, 1), quick(10, SplitKind::Auto));
  EXPECT_EQ(unsat.verdict, Verdict::Unsat);
  EXPECT_EQ(unsat.decided_by, "crown");
}

// A threshold just below the true minimum needs branch and bound to prove; one just above
// the grid minimum has a counterexample. Both splitting modes, attack off for the proof.
TEST(LirpaVerify, BranchAndBoundDecidesBothSidesOfTheMinimum) {
  at::manual_seed(21);
  Graph g = load_onnx_bytes(testing::random_mlp(2, {16, 16}, 1, "Relu"));
  auto [gmin, h] = grid_minimum(g, 801);
  // Lipschitz bound of y_0: product of the layers' Frobenius norms (>= spectral norms)
  const double lip = frobenius_product(g, 3);
  double below = gmin - lip * h - 0.02;  // certainly below the true minimum
  BoundOptions crown;
  at::Tensor root = compute_bounds(g, -at::ones({2}, at::kDouble), at::ones({2}, at::kDouble), crown).lower;
  ASSERT_LT(root[0].item<double>(), below);  // CROWN alone cannot prove it
  using Mode = std::pair<SplitKind, ReluBranching>;
  for (auto [split, branching] : {Mode{SplitKind::Input, ReluBranching::BaBSR}, Mode{SplitKind::Relu, ReluBranching::BaBSR},
                                  Mode{SplitKind::Relu, ReluBranching::FSB}}) {
    VerifyOptions o = quick(30, split);
    o.bab.branching = branching;
    o.attack.enabled = false;
    o.alpha_enabled = false;
    // ReLU splitting on a 2-d input converges slower: a threshold halfway to CROWN's bound
    double t = split == SplitKind::Input ? below : (below + root[0].item<double>()) / 2;
    VerifyResult r = verify(g, box_property("(assert (<= Y_0 " + num(t) + "))", 2, 1), o);
    EXPECT_EQ(r.verdict, Verdict::Unsat) << split_kind_name(split) << " " << relu_branching_name(branching) << " "
                                         << r.reason;
    o.attack.enabled = split == SplitKind::Relu;  // ReLU domains are not boxes: PGD finds their points
    VerifyResult s = verify(g, box_property("(assert (<= Y_0 " + num(gmin + 1e-3) + "))", 2, 1), o);
    ASSERT_EQ(s.verdict, Verdict::Sat) << split_kind_name(split) << " " << s.reason;
    EXPECT_TRUE(check_counterexample(g, box_property("(assert (<= Y_0 " + num(gmin + 1e-3) + "))", 2, 1),
                                     s.counterexample->x).has_value());
  }
}

// The input-splitting portfolio (a second search with more split candidates beside the first,
// here from the start, also in the deterministic mode; with hand-offs to ReLU splitting, the
// second search alone): a threshold below the true minimum of a 3-input net is proven, one
// above the grid minimum is falsified.
namespace {

// A random 3-input ReLU net (seed 5), the minimum of its output over a 61^3 grid of [-1, 1]^3,
// and a threshold below the true minimum (the grid's, less a Lipschitz bound times the spacing).
struct GridMinimum {
  Graph g;
  double gmin = 0.0, below = 0.0;
};
GridMinimum three_input_minimum() {
  at::manual_seed(5);
  GridMinimum m{load_onnx_bytes(testing::random_mlp(3, {16, 16}, 1, "Relu"))};
  const int steps = 61;
  at::Tensor t = at::linspace(-1, 1, steps, at::kDouble);
  auto mesh = at::meshgrid({t, t, t}, "ij");
  at::Tensor x = at::stack({mesh[0].reshape({-1}), mesh[1].reshape({-1}), mesh[2].reshape({-1})}, 1);
  m.gmin = m.g.forward(x, at::kDouble).select(1, 0).min().item<double>();
  const double lip = frobenius_product(m.g, 3);  // a Lipschitz bound of y_0
  m.below = m.gmin - lip * (2.0 / (steps - 1)) * std::sqrt(3.0) / 2 - 0.02;
  return m;
}

}  // namespace

TEST(LirpaVerify, InputSplitPortfolioDecidesBothSidesOfTheMinimum) {
  const GridMinimum m = three_input_minimum();
  const Graph& g = m.g;
  const double gmin = m.gmin, below = m.below;
  BoundOptions crown;
  at::Tensor root = compute_bounds(g, -at::ones({3}, at::kDouble), at::ones({3}, at::kDouble), crown).lower;
  ASSERT_LT(root[0].item<double>(), below);  // CROWN alone cannot prove it
  for (double share : {0.0, 3.0}) {
    for (bool synchronous : {false, true}) {
      VerifyOptions o = quick(30, SplitKind::Input);
      o.attack.enabled = false;
      o.alpha_enabled = false;
      o.bab.input_portfolio_after = 0;
      o.bab.input_relu_share = share;
      o.bab.force_synchronous = synchronous;
      o.bab.batch_size = 16;  // several batches of each search
      VerifyResult r = verify(g, box_property("(assert (<= Y_0 " + num(below) + "))", 3, 1), o);
      EXPECT_EQ(r.verdict, Verdict::Unsat) << share << " " << synchronous << " " << r.reason;
      // found by the minimising vertices of the open boxes (attack off)
      Property p = box_property("(assert (<= Y_0 " + num(gmin + 0.02) + "))", 3, 1);
      VerifyResult s = verify(g, p, o);
      ASSERT_EQ(s.verdict, Verdict::Sat) << share << " " << synchronous << " " << s.reason;
      EXPECT_TRUE(check_counterexample(g, p, s.counterexample->x).has_value());
    }
  }
}

// Input splitting's hand-offs to ReLU splitting take their Adam steps from
// bab.input_relu_beta_iterations, not beta.iterations (ReLU splitting's own): in the
// deterministic mode the search visits the same domains whatever beta.iterations, and other
// domains when the hand-offs' steps change.
TEST(LirpaVerify, HandOffsTakeTheirOwnBetaSteps) {
  const GridMinimum m = three_input_minimum();
  const auto visited = [&](int beta_steps, int hand_off_steps) {
    VerifyOptions o = quick(30, SplitKind::Input);
    o.attack.enabled = false;
    o.alpha_enabled = false;
    o.bab.input_portfolio_after = 0;   // the portfolio, with its hand-offs, from the start
    o.bab.force_synchronous = true;
    o.bab.batch_size = 16;
    o.beta.iterations = beta_steps;
    o.bab.input_relu_beta_iterations = hand_off_steps;
    VerifyResult r = verify(m.g, box_property("(assert (<= Y_0 " + num(m.below) + "))", 3, 1), o);
    EXPECT_EQ(r.verdict, Verdict::Unsat) << beta_steps << " " << hand_off_steps << " " << r.reason;
    return r.domains_visited;
  };
  const int64_t base = visited(10, 20);
  EXPECT_EQ(visited(1, 20), base) << "beta.iterations reached input splitting";
  EXPECT_EQ(visited(30, 20), base) << "beta.iterations reached input splitting";
  EXPECT_NE(visited(10, 0), base) << "the hand-offs did not take bab.input_relu_beta_iterations";
}

// Properties with a counterexample by construction (the output at a known point): the
// answer may be sat or timeout, never unsat, whatever the splitting and attack settings.
TEST(LirpaVerify, KnownCounterexampleIsNeverUnsat) {
  for (uint64_t seed = 0; seed < 4; ++seed) {
    at::manual_seed(seed);
    Graph g = load_onnx_bytes(testing::random_mlp(3, {12, 12}, 2, "Relu"));
    at::Tensor x0 = at::rand({1, 3}, at::kDouble) * 1.6 - 0.8;
    at::Tensor y0 = g.forward(x0, at::kDouble)[0];
    // unsafe: Y_0 <= y0_0 and Y_1 >= y0_1 (x0 satisfies both)
    Property p = box_property("(assert (<= Y_0 " + num(y0[0].item<double>()) + "))\n(assert (>= Y_1 " +
                                  num(y0[1].item<double>()) + "))",
                              3, 2);
    ASSERT_TRUE(check_counterexample(g, p, x0[0]).has_value());
    for (SplitKind split : {SplitKind::Input, SplitKind::Relu}) {
      for (bool attack : {true, false}) {
        VerifyOptions o = quick(3, split);
        o.attack.enabled = attack;
        o.bab.input_portfolio_after = attack ? 5 : 0;  // input splitting: both searches from the start
        o.bab.branching = seed % 2 ? ReluBranching::FSB : ReluBranching::BaBSR;
        VerifyResult r = verify(g, p, o);
        EXPECT_NE(r.verdict, Verdict::Unsat) << "seed " << seed << " " << split_kind_name(split);
        if (r.verdict == Verdict::Sat) EXPECT_TRUE(check_counterexample(g, p, r.counterexample->x).has_value());
      }
    }
  }
}

TEST(LirpaVerify, NonChainNetworkGoesThroughGraphBranchAndBound) {
  // a residual network where Y_0's alpha-CROWN bound lies well below its minimum on a fine
  // grid (the first seed that gives one): neither the incomplete stage nor the root of branch
  // and bound (CROWN, final slopes optimised) decides a threshold between the two
  at::Tensor t = at::linspace(-1, 1, 41, at::kDouble);
  auto mesh = at::meshgrid({t, t, t}, "ij");
  at::Tensor x = at::stack({mesh[0].reshape({-1}), mesh[1].reshape({-1}), mesh[2].reshape({-1})}, 1);
  BoundOptions bo;
  bo.method = Method::AlphaCrown;
  std::optional<Graph> net;
  double lb = 0, m = 0;
  for (int seed = 0; seed < 10 && !(net && m - lb > 0.05); ++seed) {
    at::manual_seed(seed);
    net.emplace(load_onnx_bytes(testing::random_residual(3)));
    lb = compute_bounds(*net, at::full({3}, -1.0, at::kDouble), at::full({3}, 1.0, at::kDouble), bo).lower[0]
             .item<double>();
    m = net->forward(x, at::kDouble).select(1, 0).min().item<double>();
  }
  ASSERT_GT(m - lb, 0.05) << "alpha-CROWN is tight on every seed tried";
  const Graph& g = *net;
  const int n_out = static_cast<int>(g.output_size());
  VerifyOptions o = quick(30, SplitKind::Auto);
  // far below every output: CROWN proves it before any branching
  VerifyResult r0 = verify(g, box_property("(assert (<= Y_0 -1000))", 3, n_out), o);
  EXPECT_EQ(r0.verdict, Verdict::Unsat);
  EXPECT_EQ(r0.decided_by, "crown");
  o.attack.enabled = false;  // the verdict must come from branch and bound
  o.alpha_enabled = false;
  // three inputs: auto splits the input box (bounded on the graph like any other), and
  // ReLU splitting on request; both prove it
  const Property between = box_property("(assert (<= Y_0 " + num(lb + 0.5 * (m - lb)) + "))", 3, n_out);
  for (auto [split, by] : {std::pair{SplitKind::Auto, "bab-input"}, std::pair{SplitKind::Relu, "bab-relu"}}) {
    o.bab.split = split;
    VerifyResult r = verify(g, between, o);
    EXPECT_EQ(r.verdict, Verdict::Unsat) << by << ": " << r.reason;
    EXPECT_EQ(r.decided_by, by);
    EXPECT_GT(r.domains_visited, 1);
  }
}


// Found by the soundness campaign: a sigmoid network left open by the incomplete stage
// reached graph branch and bound, which threw on an empty list of ReLUs. It must answer.
TEST(LirpaVerify, NetworkWithoutReluIsUnknownWithAReason) {
  at::manual_seed(3);
  Graph g = load_onnx_bytes(testing::random_mlp(3, {12, 12}, 2, "Sigmoid"));
  at::Tensor x = at::rand({4000, 3}, at::kDouble) * 2 - 1;
  const double m = g.forward(x, at::kDouble).select(1, 0).min().item<double>();
  VerifyOptions o = quick(30, SplitKind::Auto);
  o.attack.enabled = false;
  o.alpha_enabled = false;
  VerifyResult r;
  ASSERT_NO_THROW(r = verify(g, box_property("(assert (<= Y_0 " + num(m - 1e-6) + "))", 3, 2), o));
  ASSERT_EQ(r.verdict, Verdict::Unknown) << r.reason;
  EXPECT_NE(r.reason.find("no ReLU to split"), std::string::npos) << r.reason;
}

// The incomplete stage reports each stage's end with its steps and its worst open disjunct's
// bound; the full alpha-CROWN stage starts from the final-rows stage's best parameters, so
// its bound is never below that stage's. The network multiplies two variables (plane mixes
// to optimise) and has no ReLU, so branch and bound ends at once.
TEST(LirpaVerify, IncompleteStagesReportTheirEndsAndNeverLoosen) {
  at::manual_seed(3);
  OnnxBuilder b("x", {1, 3});
  auto h1 = b.node("Gemm", {b.input(), b.constant("w1", at::randn({3, 6}, at::kDouble))});
  auto h2 = b.node("Gemm", {b.input(), b.constant("w2", at::randn({3, 6}, at::kDouble))});
  auto z = b.node("Gemm", {b.node("Mul", {h1, h2}), b.constant("w3", at::randn({6, 4}, at::kDouble))});
  b.set_output(b.node("Gemm", {b.node("Mul", {z, z}), b.constant("w4", at::randn({4, 2}, at::kDouble))}));
  Graph g = load_onnx_bytes(b.bytes());
  at::Tensor x = at::rand({4000, 3}, at::kDouble) * 2 - 1;
  const double m = g.forward(x, at::kDouble).select(1, 0).min().item<double>();
  VerifyOptions o = quick(30, SplitKind::Auto);
  o.attack.enabled = false;
  o.alpha.iterations = 3;
  std::vector<Progress> ends;
  ProgressFn progress = [&ends](const Progress& p) {
    if (p.phase.size() > 5 && p.phase.substr(p.phase.size() - 5) == " done") ends.push_back(p);
  };
  verify(g, box_property("(assert (<= Y_0 " + num(m - 1e-6) + "))", 3, 2), o, progress);
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_EQ(ends[0].phase, "crown done");
  EXPECT_EQ(ends[1].phase, "alpha-crown-final done");
  EXPECT_EQ(ends[2].phase, "alpha-crown done");
  EXPECT_EQ(ends[0].iterations, 0);
  EXPECT_GT(ends[1].iterations, 0);
  EXPECT_LE(ends[1].iterations, 3);
  EXPECT_LE(ends[0].lower, 0);  // open: the property holds only by 1e-6
  EXPECT_GE(ends[1].lower, ends[0].lower - 1e-9);
  EXPECT_GE(ends[2].lower, ends[1].lower - 1e-9);
}

}  // namespace tessera::lirpa
