// Branch and bound internals: bisection, smear, ReLU split bookkeeping, the domain pool,
// BaBSR, ReluNet extraction, input splitting's batched bounds of boxes.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "lirpa/attack/pgd.h"
#include "lirpa/bab/bab.h"
#include "lirpa/bab/domain_pool.h"
#include "lirpa/bab/input_bounds.h"
#include "lirpa/bab/relu_bab.h"
#include "lirpa/propagation.h"
#include "lirpa/verify/batch_crown.h"
#include "lirpa/verify/relu_net.h"
#include "tessera/lirpa/mlp_builder.h"
#include "random_nets.h"

namespace tessera::lirpa::detail {
namespace {

ReluNet random_net(std::vector<int64_t> widths, uint64_t seed) {
  at::manual_seed(seed);
  ReluNet net;
  for (size_t k = 0; k + 1 < widths.size(); ++k) {
    net.w.push_back(at::randn({widths[k + 1], widths[k]}, at::kDouble) / std::sqrt(double(widths[k])));
    net.b.push_back(at::randn({widths[k + 1]}, at::kDouble) * 0.1);
  }
  return net;
}

// Pre-activations z_1..z_{L-1} and output for points x [N, n].
std::vector<at::Tensor> activations(const ReluNet& net, const at::Tensor& x) {
  std::vector<at::Tensor> z;
  at::Tensor h = x;
  for (int k = 0; k < net.layers(); ++k) {
    at::Tensor zk = at::addmm(net.b[k], h, net.w[k].t());
    z.push_back(zk);
    h = zk.clamp_min(0);
  }
  return z;
}

}  // namespace

TEST(LirpaBab, BisectCoversTheBox) {
  at::Tensor l = at::tensor({0.0, -1.0, 2.0}, at::kDouble).reshape({1, 3});
  at::Tensor u = at::tensor({1.0, 3.0, 2.0}, at::kDouble).reshape({1, 3});
  auto [cl, cu] = bisect(l, u, at::tensor({1}, at::kLong));
  ASSERT_EQ(cl.size(0), 2);
  EXPECT_TRUE(at::equal(cl[0], l[0]));
  EXPECT_EQ(cu[0][1].item<double>(), 1.0);  // [-1, 1]
  EXPECT_EQ(cl[1][1].item<double>(), 1.0);  // [1, 3]
  EXPECT_TRUE(at::equal(cu[1], u[0]));
  EXPECT_EQ(cu[0][0].item<double>(), 1.0);  // other dimensions untouched
  // the union of children is the parent for many random boxes and dims
  at::Tensor rl = at::randn({50, 4}, at::kDouble), ru = rl + at::rand({50, 4}, at::kDouble);
  at::Tensor dims = at::randint(0, 4, {50}, at::kLong);
  auto [kl, ku] = bisect(rl, ru, dims);
  EXPECT_TRUE(at::equal(at::min(kl.slice(0, 0, 50), kl.slice(0, 50)), rl));
  EXPECT_TRUE(at::equal(at::max(ku.slice(0, 0, 50), ku.slice(0, 50)), ru));
  at::Tensor mid_lo = ku.slice(0, 0, 50).gather(1, dims.view({-1, 1}));
  at::Tensor mid_hi = kl.slice(0, 50).gather(1, dims.view({-1, 1}));
  EXPECT_TRUE(at::equal(mid_lo, mid_hi));  // shared midpoint: no gap
}

TEST(LirpaBab, SmearPicksLargestCoefficientTimesWidth) {
  at::Tensor a = at::tensor({1.0, -5.0, 2.0, /*row 1*/ 0.0, 0.0, 9.0}, at::kDouble).reshape({1, 2, 3});
  at::Tensor l = at::zeros({1, 3}, at::kDouble), u = at::tensor({1.0, 0.1, 1.0}, at::kDouble).reshape({1, 3});
  at::Tensor rows = at::zeros({1}, at::kLong);
  EXPECT_EQ(smear_dimension(a, rows, l, u).item<int64_t>(), 2);  // |2|*1 > |-5|*0.1 > ... row 0
  EXPECT_EQ(smear_dimension(a, at::ones({1}, at::kLong), l, u).item<int64_t>(), 2);
  at::Tensor v = minimising_vertex(a, rows, l, u);
  EXPECT_TRUE(at::equal(v, at::tensor({0.0, 0.1, 0.0}, at::kDouble).reshape({1, 3})));
}

TEST(LirpaBab, ThinDimensionsAreRelativeToTheRootBox) {
  // root widths 0.08, 1, 1, 0.05, 0.05 (ACAS Xu prop_1); the box of the stuck 3_9 prop_1 search:
  // x0, x2, x3 sliced to relative widths 2e-3, 6e-5, 4e-3, x1 at 1/8, x4 whole
  at::Tensor root = at::tensor({0.08, 1.0, 1.0, 0.05, 0.05}, at::kDouble);
  at::Tensor l = at::tensor({0.6, -0.125, -0.15631, 0.4748, -0.5, /*box 1*/ 0.6, -0.5, -0.5, 0.45, -0.5}, at::kDouble)
                     .reshape({2, 5});
  at::Tensor u = at::tensor({0.60016, 0.0, -0.15625, 0.475, -0.45, /*box 1*/ 0.68, 0.5, 0.5, 0.5, -0.45}, at::kDouble)
                     .reshape({2, 5});
  at::Tensor rel = relative_widths(root, l, u);
  EXPECT_NEAR(rel[0][4].item<double>(), 1.0, 1e-12);
  EXPECT_NEAR(rel[0][1].item<double>(), 0.125, 1e-12);
  at::Tensor thin = thin_dimensions(root, l, u, 1.0 / 32);
  std::vector<bool> want = {true, false, true, true, false};  // 1/8 >= 1/32 of the widest (x4): kept
  for (int i = 0; i < 5; ++i) EXPECT_EQ(thin[0][i].item<bool>(), want[i]) << i;
  EXPECT_FALSE(thin[1].any().item<bool>());  // the root box itself: nothing thin (x0 0.08 wide is whole)
  EXPECT_TRUE(thin_dimensions(root, l, u, 1.0)[0].logical_not().sum().item<int64_t>() == 1);  // only the widest
  // a box of one point: every relative width 0, nothing is below 0 * ratio
  EXPECT_FALSE(thin_dimensions(root, l.slice(0, 1), l.slice(0, 1), 0.5).any().item<bool>());
}

// A dimension bisected down to rounding (or fixed by the root box) is a point: no split
// candidate; a thin but real width (1e-6 of the root's) is not.
TEST(LirpaBab, PointDimensionsAreNoSplitCandidates) {
  at::Tensor root = at::tensor({0.08, 1.0, 0.0, 0.05, 0.05}, at::kDouble);  // x2 fixed by the root box
  at::Tensor l = at::tensor({0.6, 0.25, -0.5, 0.45, -0.45}, at::kDouble).reshape({1, 5});
  at::Tensor u = at::tensor({0.6 + 1e-18, 0.5, -0.5, 0.45 + 5e-8, -0.45 + 1e-12}, at::kDouble).reshape({1, 5});
  at::Tensor point = point_dimensions(root, l, u);
  std::vector<bool> want = {true, false, true, false, true};  // x3: 1e-6 of its root width, kept
  for (int i = 0; i < 5; ++i) EXPECT_EQ(point[0][i].item<bool>(), want[i]) << i;
  EXPECT_FALSE(point_dimensions(root.clamp_min(1e-3), l, l + 1e-3).any().item<bool>());  // a box as wide as the root
}

// A dimension whose smear is far below the box's largest is no candidate of the two-candidate
// search (bisecting it copies the box's bound); the largest never is, even when all are tiny.
TEST(LirpaBab, NegligibleSmearIsNoSplitCandidate) {
  at::Tensor smear = at::tensor({8e-6, 6e-6, 2.3e-4, 0.0296, 0.0, 1e-12, 1e-12, 3e-12, 2e-12, 1e-12}, at::kDouble)
                         .reshape({2, 5});
  at::Tensor neg = negligible_smear(smear, 1e-3);
  std::vector<bool> want = {true, true, false, false, true,  // 2.3e-4 is 1/129 of 0.0296: kept
                            false, false, false, false, false};  // each at least 1/1000 of the largest
  for (int i = 0; i < 10; ++i) EXPECT_EQ(neg[i / 5][i % 5].item<bool>(), want[i]) << i;
  EXPECT_FALSE(neg.gather(1, smear.argmax(1, /*keepdim=*/true)).any().item<bool>());  // the largest: never
}

TEST(LirpaBab, SplitChildrenSetBothSigns) {
  std::vector<at::Tensor> split{at::zeros({2, 3}, at::kChar), at::zeros({2, 2}, at::kChar)};
  split[0][1][0] = 1;  // an earlier split is kept
  auto kids = split_children(split, at::tensor({0, 1}, at::kLong), at::tensor({2, 1}, at::kLong));
  ASSERT_EQ(kids[0].size(0), 4);
  EXPECT_EQ(kids[0][0][2].item<int>(), 1);   // parent 0, active child
  EXPECT_EQ(kids[0][2][2].item<int>(), -1);  // parent 0, inactive child
  EXPECT_EQ(kids[1][1][1].item<int>(), 1);   // parent 1 split in layer 1
  EXPECT_EQ(kids[1][3][1].item<int>(), -1);
  EXPECT_EQ(kids[0][1][0].item<int>(), 1);
  EXPECT_EQ(kids[0][3][0].item<int>(), 1);
  EXPECT_EQ(kids[0].abs().sum().item<int64_t>(), 4);  // nothing else changed
  EXPECT_EQ(kids[1].abs().sum().item<int64_t>(), 2);
}

TEST(LirpaBab, PoolPopsLowestScoresAndKeepsTheRest) {
  TensorPool pool;
  pool.push({at::arange(5, at::kLong)}, at::tensor({3.0, -1.0, 2.0, -5.0, 0.0}, at::kDouble));
  pool.push({at::arange(5, 7, at::kLong)}, at::tensor({-2.0, 9.0}, at::kDouble));
  auto [f, s] = pool.pop(3);
  EXPECT_TRUE(at::equal(f[0], at::tensor({3, 5, 1}, at::kLong)));
  EXPECT_EQ(pool.size(), 4);
  EXPECT_TRUE(at::equal(std::get<0>(pool.fields()[0].sort()), at::tensor({0, 2, 4, 6}, at::kLong)));
  auto [g, t] = pool.pop(10);
  EXPECT_EQ(g[0].size(0), 4);
  EXPECT_EQ(pool.size(), 0);
}

TEST(LirpaBab, BabsrChoosesOnlyUnstableUnsplitNeurons) {
  LayerBounds b;
  b.lower = {at::tensor({-1.0, -1.0, 0.5, -2.0}, at::kDouble).reshape({1, 4})};
  b.upper = {at::tensor({1.0, 2.0, 1.0, -1.0}, at::kDouble).reshape({1, 4})};
  std::vector<at::Tensor> lambda{at::tensor({-1.0, -0.1, -9.0, -9.0}, at::kDouble).reshape({1, 1, 4})};
  std::vector<at::Tensor> split{at::zeros({1, 4}, at::kChar)};
  auto [layer, neuron] = babsr_choice(b, lambda, split, at::zeros({1}, at::kLong));
  EXPECT_EQ(layer.item<int64_t>(), 0);
  EXPECT_EQ(neuron.item<int64_t>(), 0);  // 1 * 0.5 beats 0.1 * 2/3; 2 and 3 are stable
  split[0][0][0] = 1;
  std::tie(layer, neuron) = babsr_choice(b, lambda, split, at::zeros({1}, at::kLong));
  EXPECT_EQ(neuron.item<int64_t>(), 1);
  split[0][0][1] = -1;
  std::tie(layer, neuron) = babsr_choice(b, lambda, split, at::zeros({1}, at::kLong));
  EXPECT_EQ(layer.item<int64_t>(), -1);  // nothing left to split
}

TEST(LirpaBab, ExtractedReluNetMatchesGraph) {
  at::manual_seed(3);
  Graph g = load_onnx_bytes(testing::random_mlp(4, {6, 5}, 3, "Relu"));
  std::string why;
  auto net = extract_relu_net(g, &why);
  ASSERT_TRUE(net.has_value()) << why;
  EXPECT_EQ(net->layers(), 3);
  at::Tensor x = at::randn({20, 4}, at::kDouble);
  EXPECT_LT((net->forward(x) - g.forward(x, at::kDouble)).abs().max().item<double>(), 1e-12);
  Graph s = load_onnx_bytes(testing::random_mlp(4, {6}, 3, "Sigmoid"));
  EXPECT_FALSE(extract_relu_net(s, &why).has_value());
  EXPECT_NE(why.find("Sigmoid"), std::string::npos) << why;
}

// Convolutions read off as matrices repeat their kernels at every position: such chains
// stay on the graph engine; dense layers have the chain form.
TEST(LirpaBab, ChainFormOnlyWhereItIsAboutTheWeightsSize) {
  at::manual_seed(3);
  std::string why;
  EXPECT_TRUE(dense_form_is_compact(load_onnx_bytes(testing::random_mlp(4, {6, 5}, 3, "Relu")), &why)) << why;
  Graph wide = load_onnx_bytes(testing::random_mlp(784, {256, 256}, 10, "Relu"));
  EXPECT_TRUE(dense_form_is_compact(wide, &why)) << why;
  // [3, 32, 32] -> 16 x [16, 16] -> 32 x [8, 8]: 3072 x 4096 and 4096 x 2048 dense entries for
  // 5,088 kernel weights
  Graph cnn = build_relu_cnn({3, 32, 32}, {16, 32}, {2, 2}, 10, 1);
  EXPECT_FALSE(dense_form_is_compact(cnn, &why));
  EXPECT_NE(why.find("dense matrices would hold"), std::string::npos) << why;
}

// The cheap input-box bounds (forward linear bounds + IBP, backward rows) are sound on
// every box of a batch of small and large boxes: sampled values of C y - rhs lie above.
TEST(LirpaBab, InputBoxBoundsAreSound) {
  ReluNet net = random_net({5, 20, 20, 20, 4}, 21);
  at::Tensor c = at::randn({3, 4}, at::kDouble), rhs = at::randn({3}, at::kDouble);
  const int64_t boxes = 12;
  at::Tensor xl = at::randn({boxes, 5}, at::kDouble);
  at::Tensor width = at::rand({boxes, 5}, at::kDouble) * at::logspace(-3, 0.5, boxes, 10, at::kDouble).unsqueeze(1);
  at::Tensor xu = xl + width;
  BoxBounds bb = bound_input_boxes(net, xl, xu, c, rhs);
  ASSERT_EQ(bb.lb.size(0), boxes);
  ASSERT_EQ(bb.a_input.sizes(), (std::vector<int64_t>{boxes, 3, 5}));
  double gap = 0;
  for (int64_t b = 0; b < boxes; ++b) {
    at::Tensor x = xl[b] + width[b] * at::rand({20000, 5}, at::kDouble);
    x = at::cat({x, xl[b].unsqueeze(0), xu[b].unsqueeze(0)});  // corners too
    at::Tensor g = at::matmul(net.forward(x), c.t()) - rhs;
    at::Tensor gmin = std::get<0>(g.min(0));
    EXPECT_TRUE((gmin >= bb.lb[b] - 1e-9).all().item<bool>()) << "box " << b << ": " << gmin << " vs " << bb.lb[b];
    gap = std::max(gap, (gmin - bb.lb[b]).max().item<double>());
  }
  EXPECT_LT(gap, 1e3);  // finite, not a vacuous -inf
  // small boxes: nearly exact (the relaxation is tight when few ReLUs are unstable)
  at::Tensor tiny_u = xl + 1e-6;
  BoxBounds tiny = bound_input_boxes(net, xl, tiny_u, c, rhs);
  at::Tensor g0 = at::matmul(net.forward((xl + tiny_u) / 2), c.t()) - rhs;
  EXPECT_LT((g0 - tiny.lb).max().item<double>(), 1e-3);
}

// The backward pass restricted to unstable neurons (rows padded to the batch's largest
// count) stays sound on a deep net when the boxes of one batch have very different numbers
// of unstable neurons, and it is not looser than CROWN of every neuron by more than rounding
// on boxes where both see the same unstable set (tiny boxes: both nearly exact).
TEST(LirpaBab, InputBoxBoundsOfUnstableRowsAreSoundOnADeepNet) {
  ReluNet net = random_net({5, 30, 30, 30, 30, 30, 5}, 23);
  at::Tensor c = at::randn({4, 5}, at::kDouble), rhs = at::randn({4}, at::kDouble);
  const int64_t boxes = 16;
  at::Tensor xl = at::randn({boxes, 5}, at::kDouble);
  at::Tensor width = at::rand({boxes, 5}, at::kDouble) * at::logspace(-4, 0.7, boxes, 10, at::kDouble).unsqueeze(1);
  at::Tensor xu = xl + width;
  BoxBounds bb = bound_input_boxes(net, xl, xu, c, rhs);
  // reference: CROWN of every hidden neuron (no forward bounds), then the same final pass
  DomainBatch d{xl, xu};
  FinalBound ref = final_bound(net, d, intermediate_bounds(net, d), c, rhs);
  for (int64_t b = 0; b < boxes; ++b) {
    at::Tensor x = xl[b] + width[b] * at::rand({20000, 5}, at::kDouble);
    x = at::cat({x, xl[b].unsqueeze(0), xu[b].unsqueeze(0)});
    at::Tensor g = at::matmul(net.forward(x), c.t()) - rhs;
    at::Tensor gmin = std::get<0>(g.min(0));
    EXPECT_TRUE((gmin >= bb.lb[b] - 1e-9).all().item<bool>()) << "box " << b << ": " << gmin << " vs " << bb.lb[b];
    EXPECT_TRUE(at::isfinite(bb.lb[b]).all().item<bool>());
  }
  // the smallest boxes: every ReLU stable, both exact up to rounding
  at::Tensor small = ref.lb.narrow(0, 0, 2) - bb.lb.narrow(0, 0, 2);
  EXPECT_LT(small.abs().max().item<double>(), 1e-8);
  // on the batch as a whole the restricted bounds are about as tight as the reference
  EXPECT_GT((bb.lb - ref.lb).mean().item<double>(), -0.05 * (1 + ref.lb.abs().mean().item<double>()));
}

// Samples box b of [xl, xu] (`samples` points and its two corners): every hidden
// pre-activation z_{k+1} = W_k h_k + b_k lies inside the box's layer bounds, and C y - rhs
// lies above the box's final lower bounds.
::testing::AssertionResult box_bounds_hold(const ReluNet& net, const at::Tensor& c, const at::Tensor& rhs,
                                           const at::Tensor& xl, const at::Tensor& xu, const BoxBounds& bb, int64_t b,
                                           int samples) {
  at::Tensor x = xl[b] + (xu[b] - xl[b]) * at::rand({samples, xl.size(1)}, at::kDouble);
  x = at::cat({x, xl[b].unsqueeze(0), xu[b].unsqueeze(0)});
  at::Tensor h = x;
  for (int k = 0; k + 1 < net.layers(); ++k) {
    at::Tensor z = at::matmul(h, net.w[k].t()) + net.b[k];
    if (!(z >= bb.layers.lower[k][b] - 1e-9).all().item<bool>() || !(z <= bb.layers.upper[k][b] + 1e-9).all().item<bool>())
      return ::testing::AssertionFailure() << "box " << b << ": layer " << k + 1 << " outside its bounds";
    h = z.clamp_min(0);
  }
  at::Tensor g = at::matmul(net.forward(x), c.t()) - rhs;
  if (!(std::get<0>(g.min(0)) >= bb.lb[b] - 1e-9).all().item<bool>())
    return ::testing::AssertionFailure() << "box " << b << ": C y - rhs below its lower bound";
  return ::testing::AssertionSuccess();
}

// Boxes grouped by their number of unstable neurons: the groups partition the boxes, each
// has at least min_rows boxes, a cut is made only where it saves padded rows, and a batch
// whose counts are alike (or too small to cut) stays one group.
TEST(LirpaBab, PaddingGroupsPartitionTheBoxesAndSaveRows) {
  at::Tensor counts = at::cat({at::full({100}, 2, at::kLong), at::full({50}, 30, at::kLong), at::full({40}, 10, at::kLong)});
  counts = counts.index_select(0, at::randperm(counts.size(0), at::kLong));
  std::vector<at::Tensor> groups = padding_groups(counts);
  ASSERT_GT(groups.size(), 1u);
  ASSERT_LE(groups.size(), 4u);
  at::Tensor seen = at::zeros({counts.size(0)}, at::kLong);
  int64_t padded = 0;
  for (const at::Tensor& g : groups) {
    EXPECT_GE(g.size(0), 32);
    seen.index_add_(0, g, at::ones({g.size(0)}, at::kLong));
    padded += g.size(0) * counts.index_select(0, g).max().item<int64_t>();
  }
  EXPECT_TRUE((seen == 1).all().item<bool>());  // every box in exactly one group
  EXPECT_LE(padded, 100 * 2 + 40 * 10 + 50 * 30 + 100);  // near the unpadded 2,100 (one group: 5,700)
  EXPECT_EQ(padding_groups(at::full({500}, 7, at::kLong)).size(), 1u);
  EXPECT_EQ(padding_groups(at::arange(60, at::kLong)).size(), 1u);  // fewer than 2 x 32 boxes
}

// The grouped backward pass is sound on a batch large enough to be cut into groups (boxes
// from 1e-4 to 5 wide: very different unstable counts): sampled pre-activations of every
// hidden layer lie inside the boxes' bounds and the final bounds lie below the samples.
TEST(LirpaBab, InputBoxBoundsInGroupsAreSound) {
  ReluNet net = random_net({5, 30, 30, 30, 30, 30, 5}, 37);
  at::Tensor c = at::randn({4, 5}, at::kDouble), rhs = at::randn({4}, at::kDouble);
  const int64_t boxes = 160;
  at::Tensor xl = at::randn({boxes, 5}, at::kDouble);
  at::Tensor xu = xl + at::rand({boxes, 5}, at::kDouble) * at::logspace(-4, 0.7, boxes, 10, at::kDouble).unsqueeze(1);
  BoxBounds bb = bound_input_boxes(net, xl, xu, c, rhs);
  int cut_layers = 0;
  for (const at::Tensor& lo : bb.layers.lower) cut_layers += padding_groups((lo < 0).sum(1)).size() > 1;
  EXPECT_GT(cut_layers, 0);  // the grouped path ran (on the forward bounds' counts it would cut too)
  for (int64_t b = 0; b < boxes; ++b) ASSERT_TRUE(box_bounds_hold(net, c, rhs, xl, xu, bb, b, 500));
}

// alpha-CROWN of the conjunction over boxes with their layer bounds: never above max_k g_k at
// sampled points (sound), and above CROWN's conjunction bound on some boxes (the slopes help).
TEST(LirpaBab, AlphaConjunctionBoundIsSoundAndTighter) {
  ReluNet net = random_net({5, 30, 30, 30, 5}, 41);
  at::Tensor c = at::randn({3, 5}, at::kDouble), rhs = at::randn({3}, at::kDouble);
  const int64_t boxes = 40;
  at::Tensor xl = at::randn({boxes, 5}, at::kDouble);
  at::Tensor xu = xl + at::rand({boxes, 5}, at::kDouble) * at::logspace(-3, 0, boxes, 10, at::kDouble).unsqueeze(1);
  BoxBounds bb = bound_input_boxes(net, xl, xu, c, rhs);
  at::Tensor crown = conjunction_lower_bound(bb.lb, bb.a_input, xl, xu);
  OptimiseOptions oo;
  oo.iterations = 20;
  at::Tensor alpha = alpha_conjunction_bound(net, xl, xu, c, rhs, bb.layers, oo);
  EXPECT_GT((alpha > crown + 1e-6).sum().item<int64_t>(), 0);
  for (int64_t b = 0; b < boxes; ++b) {
    at::Tensor x = xl[b] + (xu[b] - xl[b]) * at::rand({2000, 5}, at::kDouble);
    at::Tensor g = at::matmul(net.forward(x), c.t()) - rhs;
    double sampled = std::get<0>(g.max(1)).min().item<double>();  // min over samples of max_k g_k
    ASSERT_LE(alpha[b].item<double>(), sampled + 1e-9) << "box " << b;
  }
}

// Children bounded with their parent's layer bounds (branch and bound's inheritance): every
// hidden pre-activation sampled in a child lies inside the child's bounds, those bounds lie
// inside the parent's, the final bounds are sound, and on this deep net inheritance tightens
// some bounds that CROWN of the child alone leaves looser than its parent's (it is not
// monotone in the box), which is what the intersection is for. (Not pointwise tighter than
// the child alone: tighter bounds below can flip an adaptive slope and loosen a later bound.)
TEST(LirpaBab, ChildrenInheritTheirParentsLayerBounds) {
  ReluNet net = random_net({5, 30, 30, 30, 30, 30, 5}, 31);
  at::Tensor c = at::randn({4, 5}, at::kDouble), rhs = at::randn({4}, at::kDouble);
  const int64_t boxes = 8;
  at::Tensor xl = at::randn({boxes, 5}, at::kDouble);
  at::Tensor xu = xl + at::rand({boxes, 5}, at::kDouble) * at::logspace(-2, 0.3, boxes, 10, at::kDouble).unsqueeze(1);
  BoxBounds parent = bound_input_boxes(net, xl, xu, c, rhs);
  auto [cl, cu] = bisect(xl, xu, at::randint(0, 5, {boxes}, at::kLong));  // child b and b + B lie in box b
  LayerBounds inherited;
  for (size_t k = 0; k < parent.layers.lower.size(); ++k) {
    inherited.lower.push_back(parent.layers.lower[k].repeat({2, 1}));
    inherited.upper.push_back(parent.layers.upper[k].repeat({2, 1}));
  }
  BoxBounds child = bound_input_boxes(net, cl, cu, c, rhs, &inherited);
  BoxBounds alone = bound_input_boxes(net, cl, cu, c, rhs);
  ASSERT_EQ(child.layers.lower.size(), 5u);
  int64_t looser_alone = 0;
  for (size_t k = 0; k < child.layers.lower.size(); ++k) {
    EXPECT_TRUE((child.layers.lower[k] >= inherited.lower[k]).all().item<bool>()) << "layer " << k + 1;
    EXPECT_TRUE((child.layers.upper[k] <= inherited.upper[k]).all().item<bool>()) << "layer " << k + 1;
    looser_alone += (alone.layers.lower[k] < inherited.lower[k] - 1e-9).sum().item<int64_t>() +
                    (alone.layers.upper[k] > inherited.upper[k] + 1e-9).sum().item<int64_t>();
  }
  EXPECT_GT(looser_alone, 0);
  for (int64_t b = 0; b < 2 * boxes; ++b) EXPECT_TRUE(box_bounds_hold(net, c, rhs, cl, cu, child, b, 2000));
}

// The rows' linear bounds combined over the simplex bound max_k g_k soundly (sampled values
// lie above), never below the best single row, and strictly above it where two rows each
// fail on a different part of the box (g_1 = x, g_2 = -x on [-1, 1]: rows -1 each, max >= 0).
TEST(LirpaBab, ConjunctionBoundIsSoundAndCombinesRows) {
  ReluNet net = random_net({5, 20, 20, 20, 4}, 29);
  at::Tensor c = at::randn({3, 4}, at::kDouble), rhs = at::randn({3}, at::kDouble) - 1.0;
  const int64_t boxes = 12;
  at::Tensor xl = at::randn({boxes, 5}, at::kDouble);
  at::Tensor width = at::rand({boxes, 5}, at::kDouble) * at::logspace(-3, 0.3, boxes, 10, at::kDouble).unsqueeze(1);
  at::Tensor xu = xl + width;
  BoxBounds bb = bound_input_boxes(net, xl, xu, c, rhs);
  at::Tensor comb = conjunction_lower_bound(bb.lb, bb.a_input, xl, xu);
  EXPECT_TRUE((comb >= std::get<0>(bb.lb.max(1)) - 1e-12).all().item<bool>());
  for (int64_t b = 0; b < boxes; ++b) {
    at::Tensor x = at::cat({xl[b] + width[b] * at::rand({20000, 5}, at::kDouble), xl[b].unsqueeze(0), xu[b].unsqueeze(0)});
    at::Tensor g = at::matmul(net.forward(x), c.t()) - rhs;
    double gmin = std::get<0>(g.max(1)).min().item<double>();  // min over samples of max_k g_k
    EXPECT_GE(gmin, comb[b].item<double>() - 1e-9) << "box " << b;
  }
  // hand case: lb = [-1, -1], a = [[1], [-1]] on [-1, 1] (d = 0): lambda = (1/2, 1/2) gives 0,
  // the ascent gets close to it (and any lambda is sound: never above 0)
  at::Tensor lb = at::full({1, 2}, -1.0, at::kDouble);
  at::Tensor a = at::tensor({1.0, -1.0}, at::kDouble).reshape({1, 2, 1});
  at::Tensor hand = conjunction_lower_bound(lb, a, at::full({1, 1}, -1.0, at::kDouble), at::ones({1, 1}, at::kDouble));
  EXPECT_GT(hand.item<double>(), -0.1);
  EXPECT_LE(hand.item<double>(), 1e-12);
  // an infinite row (infeasible domain) keeps the plain maximum
  lb[0][1] = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(std::isinf(conjunction_lower_bound(lb, a, at::full({1, 1}, -1.0, at::kDouble), at::ones({1, 1}, at::kDouble)).item<double>()));
}

// PGD with one box per row (the loop shared by pgd_attack and the local attack of input
// splitting): every row stays in its own box and reaches that box's minimiser of
// max_k (c_k y - rhs_k) for y = x (c = I, rhs = 0: the largest coordinate), here the box's
// lower corner; and one box for all rows broadcasts.
TEST(LirpaBab, PgdRowsStaysInEachRowsBoxAndDescends) {
  BatchFn f = [](const at::Tensor& x) { return x * 1.0; };
  at::Tensor c = at::eye(3, at::kDouble), rhs = at::zeros({3}, at::kDouble);
  at::Tensor xl = at::tensor({0.5, 0.5, 0.5, /**/ -2.0, -1.0, 5.0, /**/ 1.0, 1.0, 1.0}, at::kDouble).reshape({3, 3});
  at::Tensor xu = xl + at::tensor({1.0, 2.0, 0.5}, at::kDouble);
  at::Tensor start = xu.clone();
  PgdRows r = pgd_rows(f, xl, xu, start, c, rhs, 40, 0.25, 0.04);
  ASSERT_EQ(r.x.sizes(), xl.sizes());
  EXPECT_TRUE((r.x >= xl).all().item<bool>());
  EXPECT_TRUE((r.x <= xu).all().item<bool>());
  // min over the box of max_i x_i: reached where every coordinate that can is at its lower end
  at::Tensor want = std::get<0>(xl.max(1));
  EXPECT_LT((r.value - want).abs().max().item<double>(), 0.05);
  EXPECT_TRUE(at::allclose(r.value, std::get<0>(r.x.max(1))));
  // stops early once a row reaches a value <= 0 (row 0 starts there)
  at::Tensor s2 = start.clone();
  s2[0] = at::zeros({3}, at::kDouble);
  at::Tensor l2 = xl.clone();
  l2[0] = -at::ones({3}, at::kDouble);
  PgdRows early = pgd_rows(f, l2, xu, s2, c, rhs, 40, 0.25, 0.04);
  EXPECT_LE(early.value[0].item<double>(), 0.0);
  EXPECT_TRUE(at::equal(early.x[2], xu[2]));  // no step taken
  // one box [n] for all rows
  PgdRows one = pgd_rows(f, xl[1], xu[1], at::rand({4, 3}, at::kDouble) * 3 - 1, c, rhs, 40, 0.25, 0.04);
  EXPECT_TRUE((one.x >= xl[1]).all().item<bool>());
  EXPECT_TRUE((one.x <= xu[1]).all().item<bool>());
}

}  // namespace tessera::lirpa::detail
