// Graph ReLU splitting from several root boxes in one pool: input splitting's hand-off
// (relu_split_boxes), each root starting from the layer bounds input splitting found on it.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "lirpa/bab/bab.h"
#include "lirpa/bab/graph_bab.h"
#include "lirpa/bab/box_bounds.h"
#include "random_nets.h"

namespace tessera::lirpa::detail {
namespace {

// On boxes where the property holds with a sampled margin of 0.02 but CROWN cannot prove all
// of them, an unbounded search proves every root (the search is complete on this small net,
// so a wrong "proven" or a lost root would show), with the same verdicts as one search per
// box; with a budget of only the roots' own bounds, exactly the roots whose own bound (slopes
// optimised from the given layer bounds) is above the margin are reported proven, through
// the hand-off too.
TEST(LirpaGraphBabRoots, SeveralBoxesInOnePoolSettleEachRoot) {
  at::manual_seed(53);
  Graph g = load_onnx_bytes(testing::random_mlp(2, {24, 24}, 2, "Relu"));  // two inputs: sampling finds minima
  at::Tensor c = at::tensor({1.0, -1.0}, at::kDouble).reshape({1, 2});
  const int64_t roots = 6;
  at::Tensor xl = at::randn({roots, 2}, at::kDouble), xu = xl + 1.5;
  double lowest = std::numeric_limits<double>::infinity();
  for (int64_t b = 0; b < roots; ++b) {
    at::Tensor x = xl[b] + (xu[b] - xl[b]) * at::rand({20000, 2}, at::kDouble);
    lowest = std::min(lowest, at::matmul(g.forward(x, at::kDouble), c.t()).min().item<double>());
  }
  at::Tensor rhs = at::full({1}, lowest - 0.02, at::kDouble);  // c y - rhs >= 0.02 where sampled
  VerifyOptions o;
  RunClock clock(300.0);
  auto confirm = [&](const at::Tensor& x) {  // a point of some root box where c y <= rhs
    if (!((x >= xl).all(1).logical_and((x <= xu).all(1))).any().item<bool>()) return false;
    return (at::matmul(g.forward(x.reshape({1, -1}), at::kDouble), c.t()) - rhs).max().item<double>() <= 0;
  };
  GraphBabContext ctx{g, o, clock, confirm, nullptr, "test"};
  BabProblem p{std::get<0>(xl.min(0)), std::get<0>(xu.max(0)), c, rhs};
  std::vector<GraphRelu> relus = graph_relus(g);
  GraphBounded bb = bound_graph_domains(g, relus, box_domains(relus, xl, xu, nullptr), c, rhs);  // CROWN of each root
  ASSERT_LT(bb.lb.min().item<double>(), 0.0);  // CROWN alone leaves some root unproven
  BabOutcome all = graph_relu_split_bab(ctx, p, ReluSplitStart{xl, xu, &bb.bounds, 0});
  ASSERT_EQ(all.status, BabStatus::Proven);
  EXPECT_TRUE(all.proven_roots.all().item<bool>());
  EXPECT_GT(all.visited, roots);  // it had to split
  for (int64_t b = 0; b < roots; ++b) {
    BabOutcome one = graph_relu_split_bab(ctx, BabProblem{xl[b], xu[b], c, rhs});
    EXPECT_EQ(one.status, BabStatus::Proven) << "box " << b;
  }
  BabOutcome roots_only = graph_relu_split_bab(ctx, p, ReluSplitStart{xl, xu, &bb.bounds, roots});
  ASSERT_EQ(roots_only.status, BabStatus::Exhausted);
  EXPECT_FALSE(roots_only.proven_roots.all().item<bool>());
  BabContext chain{[&](const at::Tensor& x) { return g.forward(x, at::kDouble); }, o, clock, confirm, nullptr, "test",
                   nullptr, nullptr, g};
  BoxHandOff h = relu_split_boxes(chain, p, xl, xu, bb.bounds, roots);  // the same through the hand-off
  EXPECT_TRUE(at::equal(h.proven, roots_only.proven_roots));
  BoxHandOff all_h = relu_split_boxes(chain, p, xl, xu, bb.bounds, 0);  // without a budget: every root
  EXPECT_TRUE(all_h.proven.all().item<bool>());
  // each root's own bound from the given layer bounds, slopes optimised (beta's pass without splits)
  GraphDomains d = box_domains(relus, xl, xu, &bb.bounds);
  d.reuse_upto = at::full({roots}, static_cast<int64_t>(relus.size()) - 1, at::kLong);
  GraphBounded own = bound_graph_domains(g, relus, d, c, rhs, nullptr, &o.beta);
  EXPECT_TRUE(at::equal(roots_only.proven_roots, std::get<0>(own.lb.max(1)) > o.margin));
  // the roots' own bounds are sound: every sampled point of box b satisfies c y - rhs >= lb_b
  for (int64_t b = 0; b < roots; ++b) {
    at::Tensor x = xl[b] + (xu[b] - xl[b]) * at::rand({2000, 2}, at::kDouble);
    at::Tensor v = at::matmul(g.forward(x, at::kDouble), c.t()) - rhs;
    EXPECT_GE(v.min().item<double>(), own.lb[b].max().item<double>() - 1e-9) << "box " << b;
  }
}

}  // namespace
}  // namespace tessera::lirpa::detail
