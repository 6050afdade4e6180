// The counter-based random field and the variable-coefficient diffusion generators:
// symmetry, positive definiteness, κ ≡ 1 = Poisson, determinism, slices equal to the whole.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/random_field.h"
#include "tessera/sla/solve.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

/// Bitwise equality of two CSR matrices (pattern and values).
void expect_same(const SparseTensor& a, const SparseTensor& b) {
  ASSERT_EQ(a.rows(), b.rows());
  ASSERT_EQ(a.cols(), b.cols());
  EXPECT_TRUE(at::equal(a.row_ptr().to(at::kLong), b.row_ptr().to(at::kLong)));
  EXPECT_TRUE(at::equal(a.col_idx().to(at::kLong), b.col_idx().to(at::kLong)));
  EXPECT_TRUE(at::equal(a.values(), b.values()));
}

TEST(RandomField, IsAFunctionOfSeedAndIndexWithStandardNormalMoments) {
  at::Tensor k = lognormal_field(3, 1.0, 0, 200000);
  at::Tensor z = k.log();
  EXPECT_NEAR(z.mean().item<double>(), 0.0, 0.01);   // 200,000 samples: standard error 0.0022
  EXPECT_NEAR(z.std().item<double>(), 1.0, 0.01);
  EXPECT_DOUBLE_EQ(std::log(k[12345].item<double>()), std::log(lognormal(3, 12345, 1.0)));
  EXPECT_TRUE(at::equal(lognormal_field(3, 1.0, 12340, 10), k.narrow(0, 12340, 10)));   // a slice of the field
  EXPECT_NE(standard_normal(3, 5), standard_normal(4, 5));
  EXPECT_TRUE(at::equal(lognormal_field(3, 0.0, 0, 10), at::ones({10}, at::kDouble)));   // sigma 0: κ ≡ 1
}

TEST(VariableDiffusion, UnitConductivityIsExactlyPoisson) {
  expect_same(variable_diffusion2d(9, {0.0, 1}), poisson2d(9));
  expect_same(variable_diffusion3d(5, {0.0, 1}), poisson3d(5));
  expect_same(variable_diffusion2d(9, {0.0, 1}, at::kFloat), poisson2d(9, at::kFloat));
}

TEST(VariableDiffusion, IsSymmetricAndDeterministicForASeed) {
  for (int dims : {2, 3}) {
    const int64_t n = dims == 2 ? 13 : 6;
    const LogNormalField field{1.5, 42};
    SparseTensor a = dims == 2 ? variable_diffusion2d(n, field) : variable_diffusion3d(n, field);
    at::Tensor d = a.to_dense();
    EXPECT_TRUE(at::equal(d, d.t())) << dims;                                       // bitwise symmetric
    EXPECT_TRUE(at::equal(a.col_idx(), (dims == 2 ? poisson2d(n) : poisson3d(n)).col_idx()));   // stencil pattern
    expect_same(a, dims == 2 ? variable_diffusion2d(n, field) : variable_diffusion3d(n, field));
    SparseTensor other = dims == 2 ? variable_diffusion2d(n, {1.5, 43}) : variable_diffusion3d(n, {1.5, 43});
    EXPECT_FALSE(at::equal(a.values(), other.values()));
    // weakly diagonally dominant, strictly on boundary rows: row sums >= 0, off-diagonals <= 0
    EXPECT_GE(d.sum(1).min().item<double>(), -1e-12);
    EXPECT_LE((d - at::diag(at::diag(d))).max().item<double>(), 0.0);
  }
}

TEST(VariableDiffusion, ASliceOfRowsEqualsThoseRowsOfTheWholeMatrix) {
  const LogNormalField field{1.0, 9};
  SparseTensor whole = variable_diffusion3d(7, field);
  at::Tensor dense = whole.to_dense();
  for (auto [r0, r1] : {std::pair<int64_t, int64_t>{0, 60}, {100, 343}, {150, 151}}) {
    SparseTensor part = variable_diffusion_rows(3, 7, field, r0, r1);
    ASSERT_EQ(part.rows(), r1 - r0);
    ASSERT_EQ(part.cols(), 343);
    EXPECT_TRUE(at::equal(part.to_dense(), dense.narrow(0, r0, r1 - r0))) << r0 << " " << r1;
  }
  EXPECT_THROW(variable_diffusion_rows(4, 7, field, 0, 1), InvalidInput);
  EXPECT_THROW(variable_diffusion_rows(2, 7, field, 10, 50), InvalidInput);   // beyond 49 rows
  EXPECT_THROW(variable_diffusion2d(8, {-1.0, 0}), InvalidInput);
}

TEST(VariableDiffusion, IsPositiveDefiniteCgConvergesAndCholeskySucceeds) {
  SparseTensor a = variable_diffusion2d(40, {1.0, 5});
  at::Tensor b = at::ones({a.rows()}, at::kDouble);
  SolveOptions cg;
  cg.backend = Backend::Native;
  cg.method = Method::CG;
  cg.rtol = 1e-10;
  auto [x, info] = solve(a, b, cg);
  EXPECT_EQ(info.status, SolveStatus::Converged) << info.message;
  EXPECT_LT(info.residual, 1e-10);
  EXPECT_GT(at::dot(x, b).item<double>(), 0.0);   // b^T A^{-1} b > 0
  testing::expect_positive_definite(variable_diffusion3d(8, {2.0, 5}));
}

}  // namespace
}  // namespace tessera::sla
