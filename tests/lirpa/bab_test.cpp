// Branch and bound internals: bisection, smear, ReLU split bookkeeping, the domain pool,
// BaBSR, the dense-form test, padding groups, PGD rows (input splitting's bounds of boxes:
// box_bounds_test.cpp).

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "lirpa/attack/pgd.h"
#include "lirpa/bab/bab.h"
#include "lirpa/bab/domain_pool.h"
#include "lirpa/bab/relu_bab.h"
#include "lirpa/propagation.h"
#include "lirpa/verify/dense_form.h"
#include "tessera/lirpa/mlp_builder.h"
#include "random_nets.h"

namespace tessera::lirpa::detail {

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

// Convolutions read off as matrices repeat their kernels at every position: their forward
// pass is not cheap beside their weights; dense layers' is.
TEST(LirpaBab, DenseFormOnlyWhereItIsAboutTheWeightsSize) {
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

// PGD's random starts: all in the box, reproducible from the seed; the first half strictly
// inside, in the second half about a quarter of the inputs at each end of their range.
TEST(LirpaBab, RandomStartsHalfOnTheBoxsFaces) {
  at::Tensor l = at::tensor({-1.0, 0.0, 2.0, -0.328422877}, at::kDouble);
  at::Tensor u = at::tensor({1.0, 0.1, 3.0, 0.679857769}, at::kDouble);  // ends l + (u - l) would miss
  const int64_t n = 4000;
  at::Tensor x = random_starts(l, u, n, 7);
  ASSERT_EQ(x.sizes(), (at::IntArrayRef{n, 4}));
  EXPECT_TRUE(at::equal(x, random_starts(l, u, n, 7)));
  EXPECT_FALSE(at::equal(x, random_starts(l, u, n, 8)));
  EXPECT_TRUE((x >= l).all().item<bool>() && (x <= u).all().item<bool>());
  at::Tensor at_lower = x == l, at_upper = x == u;
  EXPECT_EQ(at_lower.narrow(0, 0, n / 2).sum().item<int64_t>() + at_upper.narrow(0, 0, n / 2).sum().item<int64_t>(), 0);
  const double lower_share = at_lower.narrow(0, n / 2, n / 2).to(at::kDouble).mean().item<double>();
  const double upper_share = at_upper.narrow(0, n / 2, n / 2).to(at::kDouble).mean().item<double>();
  EXPECT_NEAR(lower_share, 0.25, 0.02);  // 8,000 inputs: the standard deviation is 0.005
  EXPECT_NEAR(upper_share, 0.25, 0.02);
  EXPECT_EQ(random_starts(l, u, 1, 0).size(0), 1);  // one start: uniform
}

// A counterexample only at the box's face x0 = 1: everywhere else the gradient leads to x0 = -1,
// where the value is 1. Uniform starts land within 0.001 of the face with probability 5e-4
// each; pgd_attack's face starts put x0 there with probability 1/4 each.
TEST(LirpaBab, PgdAttackFindsACounterexampleOnlyOnAFace) {
  BatchFn f = [](const at::Tensor& x) {
    at::Tensor x0 = x.select(1, 0);
    return (2.0 + x0 + 0.1 * x.select(1, 1) - 1e4 * at::relu(x0 - 0.999)).unsqueeze(1);  // -7 at x0 = 1
  };
  at::Tensor l = at::full({2}, -1.0, at::kDouble), u = at::full({2}, 1.0, at::kDouble);
  AttackOptions ao;  // 32 restarts, 60 steps, seed 0
  AttackResult r = pgd_attack(f, l, u, at::ones({1, 1}, at::kDouble), at::zeros({1}, at::kDouble), ao);
  EXPECT_LE(r.value, 0.0);
  EXPECT_GE(r.x[0].item<double>(), 0.9997);
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
