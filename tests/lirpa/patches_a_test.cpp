// The convolution-aware A rows (PatchesA, and UnitRowsA through a convolution or a
// relaxation) against their dense equivalents: every operation must give the same rows,
// biases and bounds as on the dense tensor.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tessera/lirpa/a_matrix.h"
#include "tessera/lirpa/patches_a.h"

namespace tessera::lirpa {
namespace {

struct ConvCase {
  std::vector<int64_t> in_shape;  // [1, C, H, W]
  std::vector<int64_t> w_shape;   // [Co, C / groups, kh, kw]
  Conv2dGeometry geo;
};

std::vector<int64_t> conv_out_shape(const ConvCase& c) {
  at::Tensor y = at::conv2d(at::zeros(c.in_shape, at::kDouble), at::zeros(c.w_shape, at::kDouble), {}, c.geo.stride,
                            c.geo.pad, c.geo.dilation, c.geo.groups);
  return y.sizes().vec();
}

std::vector<ConvCase> cases() {
  return {
      {{1, 3, 8, 8}, {4, 3, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}},
      {{1, 4, 9, 9}, {6, 2, 3, 3}, {{2, 2}, {1, 1}, {1, 1}, 2}},    // stride, groups
      {{1, 4, 9, 7}, {4, 4, 3, 2}, {{1, 2}, {2, 0}, {2, 1}, 1}},    // dilation, uneven
      {{1, 6, 10, 10}, {6, 1, 4, 4}, {{2, 2}, {1, 1}, {1, 1}, 6}},  // depthwise
      {{1, 2, 7, 7}, {3, 2, 3, 3}, {{2, 2}, {0, 0}, {1, 1}, 1}},    // window misses the last row
  };
}

// A_x x = A_y conv(x) for every x: the pullback is the adjoint of the convolution.
void expect_pullback(const APtr& ax, const APtr& ay, const at::Tensor& w, const ConvCase& c) {
  at::Tensor x = at::randn({5, c.in_shape[1], c.in_shape[2], c.in_shape[3]}, at::kDouble);
  at::Tensor y = at::conv2d(x, w, {}, c.geo.stride, c.geo.pad, c.geo.dilation, c.geo.groups);
  at::Tensor lhs = at::matmul(ax->dense(at::kDouble).reshape({ax->rows(), -1}), x.reshape({5, -1}).t());
  at::Tensor rhs = at::matmul(ay->dense(at::kDouble).reshape({ay->rows(), -1}), y.reshape({5, -1}).t());
  EXPECT_TRUE(at::allclose(lhs, rhs, 1e-10, 1e-10)) << (lhs - rhs).abs().max();
}

void expect_same(const APtr& got, const APtr& want) {
  ASSERT_EQ(got->rows(), want->rows());
  ASSERT_EQ(got->node_shape(), want->node_shape());
  at::Tensor g = got->dense(at::kDouble), d = want->dense(at::kDouble);
  EXPECT_TRUE(at::allclose(g, d, 1e-12, 1e-12)) << (g - d).abs().max();
}

APtr random_unit_rows(const std::vector<int64_t>& shape, int64_t s) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  at::Tensor idx = at::randint(n, {s}, at::kLong);
  at::Tensor sign = (at::rand({s}, at::kDouble) > 0.5).to(at::kDouble) * 2 - 1;
  return std::make_shared<UnitRowsA>(shape, idx, sign);
}

std::vector<int64_t> lead(int64_t s, std::vector<int64_t> shape) {
  shape.insert(shape.begin(), s);
  return shape;
}

TEST(LirpaPatchesA, UnitRowsThroughConvAreTheKernel) {
  at::manual_seed(11);
  for (const ConvCase& c : cases()) {
    at::Tensor w = at::randn(c.w_shape, at::kDouble);
    APtr ay = random_unit_rows(conv_out_shape(c), 17);
    APtr ax = ay->through_conv(w, c.geo, c.in_shape, at::kDouble);
    EXPECT_NE(dynamic_cast<const PatchesA*>(ax.get()), nullptr);
    expect_pullback(ax, ay, w, c);
    expect_same(ax, DenseA::make(ay->dense(at::kDouble))->through_conv(w, c.geo, c.in_shape, at::kDouble));
  }
}

// 13 rows read the windows entry by entry, 400 (more rows than windows) through im2col
class LirpaPatchesARows : public ::testing::TestWithParam<int64_t> {};
INSTANTIATE_TEST_SUITE_P(FewAndMany, LirpaPatchesARows, ::testing::Values(13, 400));

TEST_P(LirpaPatchesARows, RelaxContractConcretizeMatchDense) {
  at::manual_seed(12);
  const int64_t s = GetParam();
  for (const ConvCase& c : cases()) {
    at::Tensor w = at::randn(c.w_shape, at::kDouble);
    APtr p = random_unit_rows(conv_out_shape(c), s)->through_conv(w, c.geo, c.in_shape, at::kDouble);
    APtr d = DenseA::make(p->dense(at::kDouble));
    // per-row slopes (alpha) and shared ones, with and without biases
    for (bool per_row : {false, true}) {
      ElementwiseRelaxation r{at::rand(lead(per_row ? s : 1, c.in_shape), at::kDouble),
                              at::randn(lead(1, c.in_shape), at::kDouble),
                              at::rand(lead(1, c.in_shape), at::kDouble), per_row ? at::Tensor() : at::randn(lead(1, c.in_shape), at::kDouble)};
      RelaxedRows rp = p->relax(r, at::kDouble), rd = d->relax(r, at::kDouble);
      EXPECT_NE(dynamic_cast<const PatchesA*>(rp.a.get()), nullptr);
      expect_same(rp.a, rd.a);
      EXPECT_TRUE(at::allclose(rp.bias, rd.bias, 1e-12, 1e-12));
      // the same relaxation recorded for a gradient takes the unfused path: the same rows
      at::Tensor k = at::randn(lead(s, c.in_shape), at::kDouble).requires_grad_();
      ElementwiseRelaxation rg{r.lower_d + 0 * k.narrow(0, 0, r.lower_d.size(0)), r.lower_b, r.upper_d, r.upper_b};
      RelaxedRows rpg = p->relax(rg, at::kDouble);
      expect_same(rpg.a, rd.a);
      EXPECT_TRUE(at::allclose(rpg.bias, rd.bias, 1e-12, 1e-12));
    }
    at::Tensor v = at::randn({c.in_shape[1], 1, 1}, at::kDouble);
    EXPECT_TRUE(at::allclose(p->contract(v), d->contract(v), 1e-12, 1e-12));
    at::Tensor l = at::randn(c.in_shape, at::kDouble), u = l + at::rand(c.in_shape, at::kDouble);
    EXPECT_TRUE(at::allclose(p->concretize_lower(l, u), d->concretize_lower(l, u), 1e-12, 1e-12));
  }
}

// Row groups (a_matrix.h): a relaxation or a box with one entry per group of S / G rows (one
// per branch-and-bound domain) acts on each row as that entry spread to every row would.
TEST_P(LirpaPatchesARows, RowGroupsActAsTheirEntrySpreadToEveryRow) {
  at::manual_seed(13);
  const int64_t s = GetParam() == 13 ? 12 : 402, groups = 3;
  for (const ConvCase& c : cases()) {
    at::Tensor w = at::randn(c.w_shape, at::kDouble);
    APtr unit = random_unit_rows(c.in_shape, s);
    APtr patches = random_unit_rows(conv_out_shape(c), s)->through_conv(w, c.geo, c.in_shape, at::kDouble);
    APtr dense = DenseA::make(at::randn(lead(s, c.in_shape), at::kDouble));
    for (const APtr& a : {unit, patches, dense}) {
      ElementwiseRelaxation grouped{at::rand(lead(groups, c.in_shape), at::kDouble),
                                    at::randn(lead(groups, c.in_shape), at::kDouble),
                                    at::rand(lead(groups, c.in_shape), at::kDouble),
                                    at::randn(lead(groups, c.in_shape), at::kDouble)};
      ElementwiseRelaxation spread{per_row(grouped.lower_d, s), per_row(grouped.lower_b, s),
                                   per_row(grouped.upper_d, s), per_row(grouped.upper_b, s)};
      RelaxedRows rg = a->relax(grouped, at::kDouble), rs = a->relax(spread, at::kDouble);
      expect_same(rg.a, rs.a);
      EXPECT_TRUE(at::allclose(rg.bias, rs.bias, 1e-12, 1e-12)) << (rg.bias - rs.bias).abs().max();
      // min over each row's box: sum A+ l_s + A- u_s with the box of the row's group
      at::Tensor l = at::randn(lead(groups, c.in_shape), at::kDouble);
      at::Tensor u = l + at::rand(lead(groups, c.in_shape), at::kDouble);
      at::Tensor ad = a->dense(at::kDouble).reshape({s, -1});
      at::Tensor ls = per_row(l, s).reshape({s, -1}), us = per_row(u, s).reshape({s, -1});
      at::Tensor want = (ad.clamp_min(0) * ls + ad.clamp_max(0) * us).sum(1);
      at::Tensor got = a->concretize_lower(l, u);
      EXPECT_TRUE(at::allclose(got, want, 1e-12, 1e-12)) << (got - want).abs().max();
    }
  }
}

TEST(LirpaPatchesA, PatchesThroughASecondConv) {
  // conv after conv: the window grows; entries over the padding must not leak through
  at::manual_seed(13);
  ConvCase first{{1, 4, 9, 9}, {6, 2, 3, 3}, {{2, 2}, {1, 1}, {1, 1}, 2}};
  ConvCase second{{1, 3, 17, 17}, {4, 3, 3, 3}, {{2, 2}, {2, 2}, {2, 2}, 1}};
  ASSERT_EQ(conv_out_shape(second), first.in_shape);
  at::Tensor w1 = at::randn(first.w_shape, at::kDouble), w2 = at::randn(second.w_shape, at::kDouble);
  APtr rows = random_unit_rows(conv_out_shape(first), 21);
  APtr p1 = rows->through_conv(w1, first.geo, first.in_shape, at::kDouble);
  APtr p2 = p1->through_conv(w2, second.geo, second.in_shape, at::kDouble);
  EXPECT_NE(dynamic_cast<const PatchesA*>(p2.get()), nullptr);
  expect_pullback(p2, p1, w2, second);
  APtr d2 = DenseA::make(p1->dense(at::kDouble))->through_conv(w2, second.geo, second.in_shape, at::kDouble);
  expect_same(p2, d2);
}

// A residual block's two paths meet at its input: their rows add as patches over the union
// of the two windows (or as dense rows when that window is as large as the node).
TEST(LirpaPatchesA, PatchesAndUnitRowsAddAsPatches) {
  at::manual_seed(16);
  ConvCase c{{1, 4, 12, 12}, {6, 4, 3, 3}, {{2, 2}, {1, 1}, {1, 1}, 1}};
  ConvCase skip{{1, 4, 12, 12}, {6, 4, 1, 1}, {{2, 2}, {0, 0}, {1, 1}, 1}};  // 1x1 stride-2 shortcut
  ASSERT_EQ(conv_out_shape(c), conv_out_shape(skip));
  APtr rows = random_unit_rows(conv_out_shape(c), 40);
  APtr through = rows->through_conv(at::randn(c.w_shape, at::kDouble), c.geo, c.in_shape, at::kDouble);
  APtr shortcut = rows->through_conv(at::randn(skip.w_shape, at::kDouble), skip.geo, skip.in_shape, at::kDouble);
  APtr unit = random_unit_rows(c.in_shape, 40);
  for (const auto& [a, b] : std::vector<std::pair<APtr, APtr>>{{through, shortcut}, {shortcut, through}, {through, unit}, {unit, through}}) {
    APtr sum = add_a(a, b, at::kDouble);
    at::Tensor want = a->dense(at::kDouble) + b->dense(at::kDouble);
    if (a == unit || b == unit) {  // unit rows sit at other offsets in every row: dense
      EXPECT_NE(dynamic_cast<const DenseA*>(sum.get()), nullptr);
    } else {
      EXPECT_NE(dynamic_cast<const PatchesA*>(sum.get()), nullptr);
    }
    EXPECT_TRUE(at::allclose(sum->dense(at::kDouble), want, 1e-12, 1e-12));
  }
  // windows that overlap without either holding the other: both placed into their union
  const std::vector<int64_t> node{1, 4, 12, 12};
  at::Tensor corner = at::randint(-1, 9, {5, 2}, at::kLong);
  APtr left = std::make_shared<PatchesA>(node, at::randn({5, 4, 3, 3}, at::kDouble), corner);
  APtr right = std::make_shared<PatchesA>(node, at::randn({5, 4, 2, 4}, at::kDouble),
                                          corner + at::tensor(std::vector<int64_t>{2, -1}, at::kLong).view({1, 2}));
  for (const auto& [a, b] : std::vector<std::pair<APtr, APtr>>{{left, right}, {right, left}}) {
    APtr sum = add_a(a, b, at::kDouble);
    const auto* p = dynamic_cast<const PatchesA*>(sum.get());
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->kernel().sizes(), (at::IntArrayRef{5, 4, 4, 4}));
    EXPECT_TRUE(at::allclose(sum->dense(at::kDouble), a->dense(at::kDouble) + b->dense(at::kDouble), 1e-12, 1e-12));
  }
  // windows as large as the node: dense rows
  APtr wide = random_unit_rows({1, 6, 1, 1}, 8)->through_conv(at::randn({6, 4, 3, 3}, at::kDouble), {{1, 1}, {0, 0}, {1, 1}, 1},
                                                              {1, 4, 3, 3}, at::kDouble);
  EXPECT_NE(dynamic_cast<const DenseA*>(wide.get()), nullptr);
}

// add_a takes its operands: a dense tensor or kernel held nowhere else is added into in place
// (its storage is the sum's), one held elsewhere is left as it was; the sums are the same.
TEST(LirpaPatchesA, AddIntoRowsHeldAloneLeavesSharedRows) {
  at::manual_seed(17);
  const std::vector<int64_t> node{1, 4, 12, 12};
  at::Tensor corner = at::randint(0, 9, {5, 2}, at::kLong);
  at::Tensor k_big = at::randn({5, 4, 3, 3}, at::kDouble), k_small = at::randn({5, 4, 1, 1}, at::kDouble);
  at::Tensor d = at::randn({5, 1, 4, 12, 12}, at::kDouble);  // [S, *node]
  auto big = [&] { return std::make_shared<PatchesA>(node, k_big.clone(), corner); };
  auto small = [&] { return std::make_shared<PatchesA>(node, k_small.clone(), corner + 1); };
  const at::Tensor big_dense = big()->dense(at::kDouble), small_dense = small()->dense(at::kDouble);
  auto expect_sum = [](const APtr& sum, const at::Tensor& want) {
    at::Tensor got = sum->dense(at::kDouble);
    ASSERT_EQ(got.sizes(), want.sizes());
    EXPECT_TRUE(at::allclose(got, want, 1e-13, 1e-13));
  };
  {  // held alone: the sum lives in the first operand's storage
    APtr a = big();
    const void* kernel = static_cast<const PatchesA*>(a.get())->kernel().data_ptr();
    APtr sum = add_a(std::move(a), small(), at::kDouble);
    ASSERT_NE(dynamic_cast<const PatchesA*>(sum.get()), nullptr);
    EXPECT_EQ(static_cast<const PatchesA*>(sum.get())->kernel().data_ptr(), kernel);
    expect_sum(sum, big_dense + small_dense);
    at::Tensor own = d.clone();
    const void* rows = own.data_ptr();
    sum = add_a(DenseA::make(std::move(own)), big(), at::kDouble);
    EXPECT_EQ(sum->dense(at::kDouble).data_ptr(), rows);
    expect_sum(sum, d + big_dense);
    expect_sum(add_a(big(), DenseA::make(d.clone()), at::kDouble), d + big_dense);
    expect_sum(add_a(DenseA::make(d.clone()), DenseA::make(d.clone()), at::kDouble), 2 * d);
  }
  {  // held elsewhere: untouched
    APtr a = big(), b = small(), dense = DenseA::make(d.clone());
    expect_sum(add_a(a, b, at::kDouble), big_dense + small_dense);
    expect_sum(add_a(dense, a, at::kDouble), d + big_dense);
    expect_sum(add_a(dense, dense, at::kDouble), 2 * d);
    EXPECT_TRUE(at::equal(a->dense(at::kDouble), big_dense));
    EXPECT_TRUE(at::equal(b->dense(at::kDouble), small_dense));
    EXPECT_TRUE(at::equal(dense->dense(at::kDouble), d));
  }
}

TEST(LirpaPatchesA, ReshapeKeepsPatchesOnlyForUnitDims) {
  at::manual_seed(14);
  ConvCase c = cases()[1];
  APtr p = random_unit_rows(conv_out_shape(c), 5)->through_conv(at::randn(c.w_shape, at::kDouble), c.geo,
                                                                c.in_shape, at::kDouble);
  APtr same = p->reshaped({4, 9, 9});
  EXPECT_NE(dynamic_cast<const PatchesA*>(same.get()), nullptr);
  EXPECT_TRUE(at::equal(same->dense(at::kDouble).reshape({5, -1}), p->dense(at::kDouble).reshape({5, -1})));
  APtr flat = p->reshaped({1, 324});
  EXPECT_EQ(dynamic_cast<const PatchesA*>(flat.get()), nullptr);
  EXPECT_TRUE(at::equal(flat->dense(at::kDouble).reshape({5, -1}), p->dense(at::kDouble).reshape({5, -1})));
}

TEST(LirpaPatchesA, UnitRowsRelaxStayUnitRows) {
  at::manual_seed(15);
  std::vector<int64_t> shape{1, 3, 4, 4};
  APtr a = random_unit_rows(shape, 9);
  for (bool per_row : {false, true}) {
    ElementwiseRelaxation r{at::rand(lead(per_row ? 9 : 1, shape), at::kDouble), at::randn(lead(1, shape), at::kDouble),
                            at::rand(lead(1, shape), at::kDouble), at::randn(lead(1, shape), at::kDouble)};
    RelaxedRows ru = a->relax(r, at::kDouble), rd = DenseA::make(a->dense(at::kDouble))->relax(r, at::kDouble);
    EXPECT_NE(dynamic_cast<const UnitRowsA*>(ru.a.get()), nullptr);
    expect_same(ru.a, rd.a);
    EXPECT_TRUE(at::allclose(ru.bias, rd.bias, 1e-12, 1e-12));
    at::Tensor l = at::randn(shape, at::kDouble), u = l + at::rand(shape, at::kDouble);
    EXPECT_TRUE(at::allclose(ru.a->concretize_lower(l, u), rd.a->concretize_lower(l, u), 1e-12, 1e-12));
  }
}

TEST(LirpaPatchesA, RejectsBadShapes) {
  EXPECT_THROW(PatchesA({2, 3, 4, 4}, at::zeros({1, 3, 1, 1}), at::zeros({1, 2}, at::kLong)), std::exception);
  EXPECT_THROW(PatchesA({1, 3, 4, 4}, at::zeros({1, 2, 1, 1}), at::zeros({1, 2}, at::kLong)), std::exception);
  EXPECT_THROW(PatchesA({1, 3, 4, 4}, at::zeros({1, 3, 1, 1}), at::zeros({2, 2}, at::kLong)), std::exception);
}

}  // namespace
}  // namespace tessera::lirpa
