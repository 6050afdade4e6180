// eigsh's Auto at an end of a clustered spectrum: the run on A spends its budget, then the
// Lanczos method runs on (A - σ I)^{-1} with σ beyond the end, certified by Cholesky.
// Reference: dense float64 eigh.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "sla/eigsh/end_shift.h"
#include "tessera/sla/eigsh.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/solve.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

/// Tridiagonal path Laplacian of n unknowns: (2, -1) with Dirichlet ends (dirichlet), or the
/// graph Laplacian (end diagonals 1, eigenvalue 0 = Gershgorin's lower bound).
SparseTensor path_laplacian(int64_t n, bool dirichlet) {
  std::vector<int64_t> rows, cols;
  std::vector<double> vals;
  for (int64_t i = 0; i < n; ++i) {
    const bool end = i == 0 || i == n - 1;
    rows.push_back(i), cols.push_back(i), vals.push_back(dirichlet || !end ? 2.0 : 1.0);
    if (i + 1 < n) {
      rows.push_back(i), cols.push_back(i + 1), vals.push_back(-1.0);
      rows.push_back(i + 1), cols.push_back(i), vals.push_back(-1.0);
    }
  }
  auto t = [](auto& v, at::ScalarType s) {
    return at::from_blob(v.data(), {static_cast<int64_t>(v.size())}, s).clone();
  };
  return SparseTensor::from_coo(t(vals, at::kDouble), t(rows, at::kLong), t(cols, at::kLong), n, n);
}

bool cholesky_available() {
  for (Backend b : compiled_direct_backends()) {
    if (b == Backend::Cholmod || b == Backend::Eigen) return true;
  }
  return false;
}

EigshOptions defaults(Which which, int64_t k, EigshBackend backend = EigshBackend::Auto) {
  EigshOptions o;
  o.which = which;
  o.k = k;
  o.backend = backend;
  return o;
}

TEST(EigshEndShift, GershgorinBoundsHoldTheSpectrum) {
  SparseTensor a = poisson2d(5);
  auto [lo, hi] = detail::gershgorin_bounds(a);
  EXPECT_DOUBLE_EQ(lo, 0.0);
  EXPECT_DOUBLE_EQ(hi, 8.0);
  at::Tensor ev = at::linalg_eigvalsh(a.to_dense());
  EXPECT_LE(lo, ev.min().item<double>());
  EXPECT_GE(hi, ev.max().item<double>());
}

TEST(EigshEndShift, ClusteredEndsThatTheRunOnAMissesConvergeByShiftInvert) {
  if (!cholesky_available()) GTEST_SKIP() << "no direct Cholesky backend";
  const int64_t n = 2000, k = 6;
  SparseTensor a = path_laplacian(n, /*dirichlet=*/true);   // gaps ~ 1e-5 of a spread of 4
  at::Tensor ev = at::linalg_eigvalsh(a.to_dense());        // ascending, float64
  for (Which which : {Which::Largest, Which::Smallest}) {
    // the Krylov run on A alone (the former default) does not converge in maxiter restarts
    EigshResult plain = eigsh(a, defaults(which, k, EigshBackend::Lanczos));
    EXPECT_EQ(plain.info.status, SolveStatus::NotConverged) << to_string(which);
    EXPECT_FALSE(plain.info.shift_invert);

    EigshResult r = eigsh(a, defaults(which, k));
    ASSERT_EQ(r.info.status, SolveStatus::Converged) << to_string(which) << ": " << r.info.message;
    EXPECT_TRUE(r.info.shift_invert);
    EXPECT_EQ(r.info.backend, "lanczos");
    at::Tensor want = which == Which::Smallest ? ev.narrow(0, 0, k) : ev.narrow(0, n - k, k);
    EXPECT_LT((r.eigenvalues - want).abs().max().item<double>(), 1e-10) << r.eigenvalues << want;
    EXPECT_LT(r.info.max_residual, 1e-8);
    // σ lies beyond the wanted end
    if (which == Which::Smallest) EXPECT_LT(r.info.sigma, ev[0].item<double>());
    if (which == Which::Largest) EXPECT_GT(r.info.sigma, ev[n - 1].item<double>());
    at::Tensor gram = at::mm(r.eigenvectors.t(), r.eigenvectors);
    EXPECT_LT((gram - at::eye(k, at::kDouble)).abs().max().item<double>(), 1e-10);
  }
}

TEST(EigshEndShift, EigenvalueGradientIsTheSumOfVVTransposeOnThePattern) {
  if (!cholesky_available()) GTEST_SKIP() << "no direct Cholesky backend";
  const int64_t n = 2000, k = 3;
  SparseTensor a = path_laplacian(n, /*dirichlet=*/true);
  auto [ev, evecs] = at::linalg_eigh(a.to_dense());
  at::Tensor v = a.values().clone().requires_grad_();
  EigshResult r = eigsh(a.with_values(v), defaults(Which::Smallest, k));
  ASSERT_EQ(r.info.status, SolveStatus::Converged) << r.info.message;
  ASSERT_TRUE(r.info.shift_invert);
  r.eigenvalues.sum().backward();
  at::Tensor rows = a.row_indices(), cols = a.col_idx().to(at::kLong);
  at::Tensor u = evecs.narrow(1, 0, k);
  at::Tensor want = (u.index_select(0, rows) * u.index_select(0, cols)).sum(1);   // sum_i u_i[r] u_i[c]
  EXPECT_LT((v.grad() - want).abs().max().item<double>(), 1e-8);
}

TEST(EigshEndShift, ABoundThatIsAnEigenvalueIsMovedOut) {
  if (!cholesky_available()) GTEST_SKIP() << "no direct Cholesky backend";
  const int64_t n = 2000, k = 3;
  SparseTensor a = path_laplacian(n, /*dirichlet=*/false);   // λ_min = 0 = Gershgorin's bound
  at::Tensor ev = at::linalg_eigvalsh(a.to_dense());
  EigshResult r = eigsh(a, defaults(Which::Smallest, k));
  ASSERT_EQ(r.info.status, SolveStatus::Converged) << r.info.message;
  EXPECT_TRUE(r.info.shift_invert);
  EXPECT_LT(r.info.sigma, 0.0);
  EXPECT_LT((r.eigenvalues - ev.narrow(0, 0, k)).abs().max().item<double>(), 1e-10) << r.eigenvalues;
  EXPECT_LT(r.info.max_residual, 1e-8);
}

TEST(EigshEndShift, WellSeparatedEndsOfAMatrixWithMuchFillStayOnTheRunOnA) {
  // random sparsity (a factor estimated at nnz n^{1/3}: a budget of hundreds of products)
  // and 6 largest eigenvalues far apart: the run on A converges within its budget
  const int64_t n = 1500;
  at::manual_seed(7);
  at::Tensor dense = at::rand({n, n}, at::kDouble) * (at::rand({n, n}, at::kDouble) < 0.01).to(at::kDouble);
  dense = dense + dense.t();
  dense.diagonal().narrow(0, n - 6, 6).add_(at::arange(1, 7, at::kDouble) * 20.0);
  SparseTensor a = SparseTensor::from_dense(dense);
  at::Tensor ev = at::linalg_eigvalsh(dense);
  EigshResult r = eigsh(a, defaults(Which::Largest, 6));
  ASSERT_EQ(r.info.status, SolveStatus::Converged) << r.info.message;
  EXPECT_FALSE(r.info.shift_invert) << r.info.operator_applications << " products";
  EXPECT_LT((r.eigenvalues - ev.narrow(0, n - 6, 6)).abs().max().item<double>(), 1e-8);
}

}  // namespace
}  // namespace tessera::sla
