// The one-pass relaxation of dense rows (dense_relax.h) against the arithmetic it replaces,
// written out in ATen: A_x = A+ d_l + A- d_u and the row constants sum(A+ b_l) + sum(A- b_u),
// for relaxations over the node, per row group and broadcast along a dimension; and the
// cases it leaves to the general path.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>
#include <vector>

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

// On a gradient tape (alpha-CROWN's slopes, rows that depend on them, bounds that do) the
// one pass is recorded as one node: its outputs and the gradients of every input equal those
// autograd takes through the arithmetic it replaces, zero coefficients (where both lines pass
// a gradient, as clamp_min and clamp_max do) and broadcast or grouped tensors included.
TEST(LirpaDenseRelax, OnATapeGivesTheGradientsOfTheArithmetic) {
  at::manual_seed(4);
  at::AutoGradMode grad(true);
  const int64_t s = 12;
  for (at::ScalarType dtype : {at::kDouble, at::kFloat}) {
    for (std::vector<int64_t> d_shape : std::vector<std::vector<int64_t>>{{s, 3, 5}, {3, 5}, {4, 3, 5}, {2, 3, 1}}) {
      for (bool biases : {true, false}) {
        SCOPED_TRACE(::testing::Message() << at::toString(dtype) << " d " << at::IntArrayRef(d_shape) << " biases " << biases);
        at::Tensor a0 = at::randn({s, 3, 5}, at::kDouble).to(dtype);
        a0.index_put_({0, 0}, 0.0);
        std::vector<at::Tensor> leaves{a0, at::rand(d_shape, dtype), biases ? at::rand(d_shape, dtype) - 0.5 : at::Tensor(),
                                       at::rand(d_shape, dtype), biases ? at::rand(d_shape, dtype) : at::Tensor()};
        at::Tensor wx = at::randn({s, 3, 5}, dtype), wb = at::randn({s}, dtype);
        auto run = [&](bool fused) {
          std::vector<at::Tensor> in;
          for (const at::Tensor& t : leaves) in.push_back(t.defined() ? t.detach().clone().requires_grad_(true) : t);
          ElementwiseRelaxation r{in[1], in[2], in[3], in[4]};
          RelaxedRows out = fused ? *relax_dense_rows(in[0] * 1, r) : reference(in[0] * 1, r);
          at::Tensor ax = out.a->dense(dtype);
          (ax * wx).sum().add((out.bias * wb).sum()).backward();
          std::vector<at::Tensor> got{ax.detach(), out.bias.detach()};
          for (const at::Tensor& t : in) got.push_back(t.defined() ? t.grad() : at::Tensor());
          return got;
        };
        std::vector<at::Tensor> got = run(true), want = run(false);
        const double tol = dtype == at::kDouble ? 1e-12 : 1e-4;
        for (size_t k = 0; k < got.size(); ++k) {
          if (!want[k].defined()) continue;
          ASSERT_TRUE(got[k].defined()) << "output " << k;
          EXPECT_TRUE(at::allclose(got[k], want[k], tol, tol)) << "output " << k << ": " << (got[k] - want[k]).abs().max();
        }
      }
    }
  }
}

// The walk over a relaxation's rows from any starting row of A (a thread's first row may
// fall inside a group) reads row i / per_group at every step.
TEST(LirpaDenseRelax, RowWalkReadsTheGroupOfEveryRow) {
  const int64_t n = 5;
  std::vector<double> data(200);
  for (int64_t per_group : {1, 3, 7})
    for (int64_t start = 0; start < 20; ++start) {
      RowWalk<const double> walk(data.data(), per_group, start, n);
      for (int64_t i = start; i < start + 30; ++i)
        ASSERT_EQ(walk.next(), data.data() + (i / per_group) * n) << per_group << " " << start << " " << i;
    }
}

TEST(LirpaDenseRelax, LeavesShapesAndInfinitiesToTheGeneralPath) {
  at::Tensor a = at::randn({6, 4}, at::kDouble);
  at::Tensor d = at::rand({4}, at::kDouble), b = at::rand({4}, at::kDouble);
  EXPECT_TRUE(relax_dense_rows(a, {d, b, d, b}).has_value());
  EXPECT_FALSE(relax_dense_rows(a, {at::rand({4, 4}, at::kDouble), b, d, b}).has_value());  // 4 groups for 6 rows
  at::Tensor inf = b.clone();
  inf[1] = -std::numeric_limits<double>::infinity();
  EXPECT_FALSE(relax_dense_rows(a, {d, inf, d, b}).has_value());
}

}  // namespace
}  // namespace tessera::lirpa::detail
