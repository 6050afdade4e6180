// Graph ReLU splitting beyond `bab.inherit_max_bytes` (graph_relu_split.cpp keep_open): once the
// pool's slopes and split multipliers would pass the budget, they are dropped (the pool's
// fields cleared) and the children start from CROWN's slopes and zero multipliers. The
// verdicts must not change, and the drop must happen where the budget says.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "lirpa/bab/bab.h"
#include "lirpa/bab/graph_bab.h"
#include "random_nets.h"

namespace tessera::lirpa::detail {
namespace {

struct Searched {
  BabOutcome out;
  at::Tensor x;  // the confirmed counterexample, if any
};

Searched search(const Graph& g, const at::Tensor& lo, const at::Tensor& hi, const at::Tensor& c, const at::Tensor& rhs,
           const VerifyOptions& o, int64_t max_visited = 0) {
  RunClock clock(o.timeout);
  Searched r;
  auto confirm = [&](const at::Tensor& x) {  // a point of the box where c y <= rhs
    at::Tensor y = g.forward(x.reshape({1, -1}), at::kDouble).reshape({-1});
    if (!(x >= lo).all().item<bool>() || !(x <= hi).all().item<bool>()) return false;
    if (!(at::matmul(c, y) <= rhs).all().item<bool>()) return false;
    r.x = x.clone();
    return true;
  };
  GraphBabContext ctx{g, o, clock, confirm, nullptr, "test"};
  BabProblem p{lo, hi, c, rhs};
  r.out = max_visited > 0 ? graph_relu_split_bab(ctx, p, ReluSplitStart{lo.reshape({1, -1}), hi.reshape({1, -1}),
                                                                          nullptr, max_visited})
                          : graph_relu_split_bab(ctx, p);
  return r;
}

// A two-input MLP (sampling finds its minima), one domain per batch: the property y_0 - y_1 >
// rhs holds with a sampled margin of 0.02 (unsat) or fails by 0.02 (sat). With the pool
// allowed two domains' slopes and multipliers, the root's and the first batch's children
// keep theirs, and the drop comes when a batch's two open children meet an inherited domain
// still in the pool (pool + open >= 3 with at most 2 open): that domain's fields are cleared.
// With one byte they are dropped at the root. Each run's verdict equals the unlimited run's:
// proven where sampling found no point below rhs, a counterexample inside the box below rhs
// where sampling found one.
TEST(LirpaGraphBabInherit, DroppingSlopesBeyondTheBudgetKeepsTheVerdicts) {
  at::manual_seed(71);
  Graph g = load_onnx_bytes(testing::random_mlp(2, {24, 24}, 2, "Relu"));
  const std::vector<GraphRelu> relus = graph_relus(g);
  at::Tensor c = at::tensor({1.0, -1.0}, at::kDouble).reshape({1, 2});
  at::Tensor lo = at::randn({2}, at::kDouble), hi = lo + 1.5;
  at::Tensor xs = lo + (hi - lo) * at::rand({20000, 2}, at::kDouble);
  const double lowest = at::matmul(g.forward(xs, at::kDouble), c.t()).min().item<double>();
  VerifyOptions o;
  o.timeout = 60;
  o.attack.enabled = false;
  o.bab.batch_size = 1;
  int64_t neurons = 0;
  for (const GraphRelu& r : relus) neurons += r.size;
  const int64_t per_domain = 2 * 4 * c.size(0) * neurons;  // alpha and beta, float32, K rows
  for (double shift : {-0.02, 0.02}) {
    SCOPED_TRACE(shift < 0 ? "unsat" : "sat");
    at::Tensor rhs = at::full({1}, lowest + shift, at::kDouble);
    Searched full = search(g, lo, hi, c, rhs, o);
    EXPECT_TRUE(full.out.inherited) << "the default budget dropped the slopes of a tiny search";
    ASSERT_EQ(full.out.status, shift < 0 ? BabStatus::Proven : BabStatus::Falsified) << full.out.reason;
    if (shift < 0) EXPECT_GT(full.out.visited, 8) << "too few batches to exercise the pool";
    for (int64_t budget : {2 * per_domain, int64_t{1}}) {
      SCOPED_TRACE(budget);
      VerifyOptions ob = o;
      ob.bab.inherit_max_bytes = budget;
      Searched r = search(g, lo, hi, c, rhs, ob);
      EXPECT_EQ(r.out.status, full.out.status) << r.out.reason;
      if (r.out.status == BabStatus::Falsified) {
        ASSERT_TRUE(r.x.defined());
        EXPECT_TRUE((r.x >= lo).all().item<bool>() && (r.x <= hi).all().item<bool>());
        at::Tensor y = g.forward(r.x.reshape({1, -1}), at::kDouble).reshape({-1});
        EXPECT_LE(at::matmul(c, y).item<double>(), rhs.item<double>());
      }
      if (shift > 0) continue;  // a counterexample may come before the pool grows
      EXPECT_FALSE(r.out.inherited) << "the pool kept its slopes beyond " << budget << " bytes";
      // after the root and one batch (3 domains bounded) at most 2 open children are kept
      Searched first = search(g, lo, hi, c, rhs, ob, 3);
      ASSERT_EQ(first.out.status, BabStatus::Exhausted) << first.out.reason;
      EXPECT_EQ(first.out.inherited, budget == 2 * per_domain) << "dropped at the wrong point";
    }
  }
}

}  // namespace
}  // namespace tessera::lirpa::detail
