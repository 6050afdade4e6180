// The one-pass relaxation of dense rows (dense_relax.h) against the arithmetic it replaces,
// written out in ATen: A_x = A+ d_l + A- d_u and the row constants sum(A+ b_l) + sum(A- b_u),
// for relaxations over the node, per row group and broadcast along a dimension; and the
// cases it leaves to the general path.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "lirpa/dense_relax.h"

namespace tessera::lirpa::detail {
namespace {

// The reference: each relaxation tensor t as [G, node...] spread over S rows (row s: s / (S / G)).
at::Tensor spread(const at::Tensor& t, const at::Tensor& a) {
  at::Tensor g = t.dim() == a.dim() - 1 ? t.unsqueeze(0) : t;
  const int64_t s = a.size(0), groups = g.size(0);
  std::vector<int64_t> shape = a.sizes().vec();
  shape[0] = groups;
  return g.expand(shape).repeat_interleave(s / groups, 0);
}

RelaxedRows reference(const at::Tensor& a, const ElementwiseRelaxation& r) {
  at::Tensor pos = a.clamp_min(0), neg = a.clamp_max(0);
  at::Tensor ax = pos * spread(r.lower_d, a) + neg * spread(r.upper_d, a);
  at::Tensor bias = at::zeros({a.size(0)}, a.options());
  if (r.lower_b.defined()) bias = bias + (pos * spread(r.lower_b, a)).reshape({a.size(0), -1}).sum(1);
  if (r.upper_b.defined()) bias = bias + (neg * spread(r.upper_b, a)).reshape({a.size(0), -1}).sum(1);
  return {DenseA::make(ax), bias};
}

void expect_same(const RelaxedRows& got, const RelaxedRows& want) {
  at::Tensor g = got.a->dense(at::kDouble), w = want.a->dense(at::kDouble);
  ASSERT_EQ(g.sizes(), w.sizes());
  EXPECT_TRUE(at::equal(g, w));  // one product per entry: the same bits
  EXPECT_TRUE(at::allclose(got.bias, want.bias, 1e-13, 1e-13)) << (got.bias - want.bias).abs().max().item<double>();
}

TEST(LirpaDenseRelax, MatchesTheArithmeticItReplaces) {
  at::manual_seed(3);
  const int64_t s = 12;
  at::Tensor a = at::randn({s, 3, 5}, at::kDouble);
  a.index_put_({0, 0}, 0.0);  // zero coefficients take neither line
  auto node = [](std::vector<int64_t> shape) { return at::rand(shape, at::kDouble); };
  struct Case {
    const char* name;
    std::vector<int64_t> d_shape;
    bool biases;
  };
  for (const Case& c : {Case{"over the node", {3, 5}, true}, Case{"one per row", {s, 3, 5}, true},
                        Case{"row groups", {4, 3, 5}, true}, Case{"one group", {1, 3, 5}, true},
                        Case{"broadcast dimension", {2, 3, 1}, true}, Case{"no constants", {3, 5}, false}}) {
    SCOPED_TRACE(c.name);
    ElementwiseRelaxation r{node(c.d_shape), c.biases ? node(c.d_shape) - 0.5 : at::Tensor(), node(c.d_shape),
                            c.biases ? node(c.d_shape) : at::Tensor()};
    auto fused = relax_dense_rows(a, r);
    ASSERT_TRUE(fused.has_value());
    expect_same(*fused, reference(a, r));
    // what DenseA::relax gives: the fused rows when no gradient is recorded
    expect_same(DenseA::make(a)->relax(r, at::kDouble), reference(a, r));
  }
}

TEST(LirpaDenseRelax, LeavesGradientsShapesAndInfinitiesToTheGeneralPath) {
  at::Tensor a = at::randn({6, 4}, at::kDouble);
  at::Tensor d = at::rand({4}, at::kDouble), b = at::rand({4}, at::kDouble);
  EXPECT_TRUE(relax_dense_rows(a, {d, b, d, b}).has_value());
  {
    at::AutoGradMode grad(true);
    at::Tensor slope = d.clone().requires_grad_(true);
    EXPECT_FALSE(relax_dense_rows(a, {slope, b, d, b}).has_value());  // alpha being optimised
    RelaxedRows rows = DenseA::make(a)->relax({slope, b, d, b}, at::kDouble);
    EXPECT_TRUE(rows.a->dense(at::kDouble).requires_grad());  // the general path keeps the gradient
  }
  EXPECT_FALSE(relax_dense_rows(a, {at::rand({4, 4}, at::kDouble), b, d, b}).has_value());  // 4 groups for 6 rows
  at::Tensor inf = b.clone();
  inf[1] = -std::numeric_limits<double>::infinity();
  EXPECT_FALSE(relax_dense_rows(a, {d, inf, d, b}).has_value());
}

}  // namespace
}  // namespace tessera::lirpa::detail
