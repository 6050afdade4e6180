// The P1 finite-element Laplacian on a perturbed mesh: symmetric, positive definite, zero
// row sums away from the boundary, Poisson on the unperturbed mesh, deterministic.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/solve.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

TEST(FeLaplacian, UnperturbedMeshGivesThePoissonValues) {
  for (bool random_diagonals : {false, true}) {
    SparseTensor a = fe_laplacian2d(9, {0.0, random_diagonals, 3});
    EXPECT_LT((a.to_dense() - poisson2d(9).to_dense()).abs().max().item<double>(), 1e-13) << random_diagonals;
  }
  // one diagonal direction: the 5-point pattern plus one diagonal neighbour on each side (7 per row inside)
  EXPECT_EQ(fe_laplacian2d(9, {0.0, false, 3}).nnz(), 81 + 2 * (2 * 9 * 8) + 2 * 8 * 8);
}

TEST(FeLaplacian, IsSymmetricWithZeroRowSumsAwayFromTheBoundary) {
  const int64_t n = 15;
  SparseTensor a = fe_laplacian2d(n, {0.45, true, 8});
  at::Tensor d = a.to_dense();
  EXPECT_TRUE(at::equal(d, d.t()));   // bitwise
  at::Tensor sums = d.sum(1).view({n, n});
  // rows whose node has no boundary neighbour (i, j in 2..n-1): Σ_q K_pq = ∫ ∇φ_p · ∇1 = 0
  EXPECT_LT(sums.narrow(0, 1, n - 2).narrow(1, 1, n - 2).abs().max().item<double>(), 1e-12);
  EXPECT_GT(sums.select(0, 0).min().item<double>(), 0.0);   // next to the boundary: > 0
  const int64_t per_row_min = (a.row_ptr().diff()).min().item<int64_t>();
  const int64_t per_row_max = (a.row_ptr().diff()).max().item<int64_t>();
  EXPECT_GE(per_row_min, 3);   // a corner node: itself and at least two neighbours
  EXPECT_LE(per_row_max, 9);
  EXPECT_GT(a.nnz(), poisson2d(n).nnz());   // the random cuts add diagonal neighbours
}

TEST(FeLaplacian, IsDeterministicForASeedAndDiffersAcrossSeeds) {
  SparseTensor a = fe_laplacian2d(12, {0.3, true, 4}), b = fe_laplacian2d(12, {0.3, true, 4});
  EXPECT_TRUE(at::equal(a.row_ptr(), b.row_ptr()));
  EXPECT_TRUE(at::equal(a.col_idx(), b.col_idx()));
  EXPECT_TRUE(at::equal(a.values(), b.values()));
  EXPECT_FALSE(at::equal(a.values(), fe_laplacian2d(12, {0.3, true, 5}).values()));
  EXPECT_THROW(fe_laplacian2d(12, {0.5, true, 4}), InvalidInput);
  EXPECT_THROW(fe_laplacian2d(0), InvalidInput);
}

TEST(FeLaplacian, IsPositiveDefiniteCgConvergesAndCholeskySucceeds) {
  SparseTensor a = fe_laplacian2d(50, {0.4, true, 2});
  at::Tensor b = at::ones({a.rows()}, at::kDouble);
  SolveOptions cg;
  cg.backend = Backend::Native;
  cg.method = Method::CG;
  auto [x, info] = solve(a, b, cg);
  EXPECT_EQ(info.status, SolveStatus::Converged) << info.message;
  EXPECT_LT(info.residual, 1e-10);
  testing::expect_positive_definite(fe_laplacian2d(12, {0.4, true, 2}));
}

}  // namespace
}  // namespace tessera::sla
