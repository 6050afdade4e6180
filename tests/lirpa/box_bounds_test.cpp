// Input splitting's bounds of boxes on the graph engine (box_bounds.h, bound_boxes): sound on
// every box of batches of small and large boxes (sampled pre-activations inside every ReLU
// input's bounds, sampled C y - rhs above every row's bound and max_k above the conjunction's),
// nearly exact on tiny boxes, children inside their parents' bounds, alpha-CROWN of the
// conjunction sound and tighter than CROWN's.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "lirpa/bab/box_bounds.h"
#include "lirpa/bab/input_split_steps.h"
#include "lirpa/propagation.h"
#include "random_nets.h"

namespace tessera::lirpa::detail {
namespace {

struct Boxes {
  Graph g;
  std::vector<GraphRelu> relus;
  at::Tensor c, rhs, xl, xu;
};

/// A random ReLU MLP (5 inputs, `widths`, 5 outputs), K = 4 rows c, and `boxes` boxes whose
/// widths run from 10^lo to 10^hi: very different counts of unstable neurons in one batch.
Boxes make_boxes(std::vector<int64_t> widths, uint64_t seed, int64_t boxes, double lo, double hi) {
  at::manual_seed(seed);
  Boxes b{load_onnx_bytes(testing::random_mlp(5, widths, 5, "Relu")), {}, {}, {}, {}, {}};
  b.relus = graph_relus(b.g);
  b.c = at::randn({4, 5}, at::kDouble), b.rhs = at::randn({4}, at::kDouble);
  b.xl = at::randn({boxes, 5}, at::kDouble);
  b.xu = b.xl + at::rand({boxes, 5}, at::kDouble) * at::logspace(lo, hi, boxes, 10, at::kDouble).unsqueeze(1);
  return b;
}

/// The boxes bounded as bound_boxes bounds them, parent bounds optional.
GraphBounded bound(const Boxes& b, const at::Tensor& xl, const at::Tensor& xu, const LayerBounds* parent = nullptr) {
  return bound_box_domains(b.g, b.relus, xl, xu, b.c, b.rhs, parent);
}

/// Samples box i of [xl, xu] (`samples` points and its two corners): every ReLU input inside
/// the box's bounds, every row of C y - rhs above its lower bound.
::testing::AssertionResult box_holds(const Boxes& b, const at::Tensor& xl, const at::Tensor& xu,
                                     const GraphBounded& gb, int64_t i, int samples) {
  at::Tensor x = xl[i] + (xu[i] - xl[i]) * at::rand({samples, xl.size(1)}, at::kDouble);
  x = at::cat({x, xl[i].unsqueeze(0), xu[i].unsqueeze(0)});
  std::vector<at::Tensor> v = testing::node_values(b.g, x);
  for (size_t j = 0; j < b.relus.size(); ++j) {
    at::Tensor z = v[b.relus[j].input].reshape({x.size(0), -1});
    if (!(z >= gb.bounds.lower[j][i] - 1e-9).all().item<bool>() || !(z <= gb.bounds.upper[j][i] + 1e-9).all().item<bool>())
      return ::testing::AssertionFailure() << "box " << i << ": ReLU node " << j << " outside its bounds";
  }
  at::Tensor g = at::matmul(v[b.g.output_id()].reshape({x.size(0), -1}), b.c.t()) - b.rhs;
  if (!(std::get<0>(g.min(0)) >= gb.lb[i] - 1e-9).all().item<bool>())
    return ::testing::AssertionFailure() << "box " << i << ": C y - rhs below its lower bound";
  return ::testing::AssertionSuccess();
}

/// min over samples of box i of max_k g_k (g = C y - rhs).
double sampled_conjunction(const Boxes& b, const at::Tensor& xl, const at::Tensor& xu, int64_t i, int samples) {
  at::Tensor x = at::cat({xl[i] + (xu[i] - xl[i]) * at::rand({samples, xl.size(1)}, at::kDouble),
                          xl[i].unsqueeze(0), xu[i].unsqueeze(0)});
  at::Tensor g = at::matmul(b.g.forward(x, at::kDouble), b.c.t()) - b.rhs;
  return std::get<0>(g.max(1)).min().item<double>();
}

}  // namespace

// A batch of boxes from 1e-4 to 5 wide on a deep net, large enough to be bounded in groups
// whose padding rows are intersected too: every box's bounds hold its samples; the tiniest
// boxes (every ReLU stable) are exact up to rounding; bound_boxes' score (the conjunction) is
// at least the best row's bound and below the sampled minimum of max_k g_k.
TEST(LirpaBoxBounds, BoxesOfEverySizeAreSoundAndTinyOnesExact) {
  Boxes b = make_boxes({30, 30, 30, 30, 30}, 37, 160, -4, 0.7);
  GraphBounded gb = bound(b, b.xl, b.xu);
  int grouped = 0;
  for (const at::Tensor& lo : gb.bounds.lower) grouped += padding_groups((lo < 0).sum(1)).size() > 1;
  EXPECT_GT(grouped, 0);  // the grouped path ran
  for (int64_t i = 0; i < b.xl.size(0); ++i) ASSERT_TRUE(box_holds(b, b.xl, b.xu, gb, i, 500));
  at::Tensor mid = b.g.forward((b.xl.narrow(0, 0, 2) + b.xu.narrow(0, 0, 2)) / 2, at::kDouble);
  at::Tensor g0 = at::matmul(mid, b.c.t()) - b.rhs;
  EXPECT_LT((g0 - gb.lb.narrow(0, 0, 2)).max().item<double>(), 1e-3);
  Bounded bb = bound_boxes(b.g, b.relus, b.xl, b.xu, BabProblem{b.xl[0], b.xu[0], b.c, b.rhs}, nullptr);
  EXPECT_TRUE((bb.score >= std::get<0>(gb.lb.max(1)) - 1e-12).all().item<bool>());
  for (int64_t i = 0; i < b.xl.size(0); i += 7)
    EXPECT_LE(bb.score[i].item<double>(), sampled_conjunction(b, b.xl, b.xu, i, 2000) + 1e-9) << "box " << i;
}

// Children bounded with their parent's ReLU-input bounds as limits (branch and bound's
// inheritance): the children's bounds lie inside the parent's and hold every sample; CROWN of
// a child alone is looser than its parent somewhere (CROWN is not monotone in the box), which
// is what the limits are for.
TEST(LirpaBoxBounds, ChildrenStayInsideTheirParentsBounds) {
  Boxes b = make_boxes({30, 30, 30, 30, 30}, 31, 8, -2, 0.3);
  GraphBounded parent = bound(b, b.xl, b.xu);
  auto [cl, cu] = bisect(b.xl, b.xu, at::randint(0, 5, {8}, at::kLong));  // child i and i + 8 lie in box i
  LayerBounds inherited;
  for (size_t j = 0; j < b.relus.size(); ++j) {
    inherited.lower.push_back(parent.bounds.lower[j].repeat({2, 1}));
    inherited.upper.push_back(parent.bounds.upper[j].repeat({2, 1}));
  }
  GraphBounded child = bound(b, cl, cu, &inherited);
  GraphBounded alone = bound(b, cl, cu);
  int64_t looser_alone = 0;
  for (size_t j = 0; j < b.relus.size(); ++j) {
    EXPECT_TRUE((child.bounds.lower[j] >= inherited.lower[j]).all().item<bool>()) << "ReLU node " << j;
    EXPECT_TRUE((child.bounds.upper[j] <= inherited.upper[j]).all().item<bool>()) << "ReLU node " << j;
    looser_alone += (alone.bounds.lower[j] < inherited.lower[j] - 1e-9).sum().item<int64_t>() +
                    (alone.bounds.upper[j] > inherited.upper[j] + 1e-9).sum().item<int64_t>();
  }
  EXPECT_GT(looser_alone, 0);
  for (int64_t i = 0; i < 16; ++i) EXPECT_TRUE(box_holds(b, cl, cu, child, i, 2000));
}

// The rows' linear bounds combined over the simplex bound max_k g_k soundly (sampled values
// lie above), never below the best single row, and strictly above it where two rows each
// fail on a different part of the box (g_1 = x, g_2 = -x on [-1, 1]: rows -1 each, max >= 0).
TEST(LirpaBoxBounds, ConjunctionBoundIsSoundAndCombinesRows) {
  Boxes b = make_boxes({20, 20, 20}, 29, 12, -3, 0.3);
  b.rhs = b.rhs - 1.0;
  GraphBounded gb = bound(b, b.xl, b.xu);
  at::Tensor comb = conjunction_lower_bound(gb.lb, gb.a_input, b.xl, b.xu);
  EXPECT_TRUE((comb >= std::get<0>(gb.lb.max(1)) - 1e-12).all().item<bool>());
  for (int64_t i = 0; i < b.xl.size(0); ++i)
    EXPECT_GE(sampled_conjunction(b, b.xl, b.xu, i, 20000), comb[i].item<double>() - 1e-9) << "box " << i;
  // hand case: lb = [-1, -1], a = [[1], [-1]] on [-1, 1] (d = 0): lambda = (1/2, 1/2) gives 0,
  // the ascent gets close to it (and any lambda is sound: never above 0)
  at::Tensor lb = at::full({1, 2}, -1.0, at::kDouble);
  at::Tensor a = at::tensor({1.0, -1.0}, at::kDouble).reshape({1, 2, 1});
  at::Tensor one_l = at::full({1, 1}, -1.0, at::kDouble), one_u = at::ones({1, 1}, at::kDouble);
  at::Tensor hand = conjunction_lower_bound(lb, a, one_l, one_u);
  EXPECT_GT(hand.item<double>(), -0.1);
  EXPECT_LE(hand.item<double>(), 1e-12);
  // an infinite row (infeasible domain) keeps the plain maximum
  lb[0][1] = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(std::isinf(conjunction_lower_bound(lb, a, one_l, one_u).item<double>()));
}

// alpha-CROWN of the conjunction over boxes with their ReLU-input bounds: never above max_k
// g_k at sampled points (sound), and above CROWN's conjunction bound on some boxes (the
// slopes help); a clock that has run out leaves every box at -inf (nothing claimed).
TEST(LirpaBoxBounds, AlphaConjunctionBoundIsSoundAndTighter) {
  Boxes b = make_boxes({30, 30, 30}, 41, 40, -3, 0);
  b.rhs = b.rhs + 4.0;  // no box verified by CROWN: the steps run on every box
  GraphBounded gb = bound(b, b.xl, b.xu);
  ASSERT_TRUE((gb.lb < 0).all().item<bool>());
  at::Tensor crown = conjunction_lower_bound(gb.lb, gb.a_input, b.xl, b.xu);
  BetaOptions steps;
  at::Tensor alpha = alpha_conjunction_bound(b.g, b.relus, b.xl, b.xu, b.c, b.rhs, gb.bounds, steps);
  EXPECT_GT((alpha > crown + 1e-6).sum().item<int64_t>(), 0);
  for (int64_t i = 0; i < b.xl.size(0); ++i)
    ASSERT_LE(alpha[i].item<double>(), sampled_conjunction(b, b.xl, b.xu, i, 2000) + 1e-9) << "box " << i;
  at::Tensor stopped = alpha_conjunction_bound(b.g, b.relus, b.xl, b.xu, b.c, b.rhs, gb.bounds, steps, [] { return true; });
  EXPECT_TRUE((stopped == -std::numeric_limits<double>::infinity()).all().item<bool>());
}

}  // namespace tessera::lirpa::detail
