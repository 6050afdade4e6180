// eigsh's single-vector `lanczos` backend finds every copy of a multiple eigenvalue: 2D
// Poisson's double eigenvalues (grids 20, 30, 100; k = 1..8 at both ends) and a matrix
// whose every eigenvalue is triple, against float64 dense eigh (the analytic spectrum at
// 100 x 100, itself checked against dense eigh at 30 x 30).

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tessera/sla/eigsh.h"
#include "tessera/sla/generators.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

/// 2D Poisson's eigenvalues on an m x m grid, ascending: λ_ij = 4 - 2 cos(iπ/(m+1)) - 2 cos(jπ/(m+1)).
at::Tensor poisson2d_spectrum(int64_t m) {
  std::vector<double> exact;
  for (int64_t i = 1; i <= m; ++i) {
    for (int64_t j = 1; j <= m; ++j) {
      exact.push_back(4 - 2 * std::cos(i * M_PI / (m + 1)) - 2 * std::cos(j * M_PI / (m + 1)));
    }
  }
  std::sort(exact.begin(), exact.end());
  return at::tensor(exact, at::kDouble);
}

/// eigsh with backend `lanczos` for the k smallest or largest: converged, the expected
/// eigenvalues (ascending spectrum `all`) with every copy, residuals below 1e-8, V^T V = I.
void expect_every_copy(const SparseTensor& a, const at::Tensor& all, int64_t k, Which which) {
  EigshOptions o;
  o.backend = EigshBackend::Lanczos;
  o.k = k;
  o.which = which;
  EigshResult r = eigsh(a, o);
  const std::string what = std::string(to_string(which)) + " k = " + std::to_string(k) + " n = " +
                           std::to_string(a.rows());
  ASSERT_EQ(r.info.status, SolveStatus::Converged) << what << ": " << r.info.message;
  EXPECT_EQ(r.info.backend, "lanczos");
  at::Tensor want = which == Which::Smallest ? all.narrow(0, 0, k) : all.narrow(0, all.size(0) - k, k);
  EXPECT_LT((r.eigenvalues - want).abs().max().item<double>(), 1e-9) << what << "\n" << r.eigenvalues << want;
  EXPECT_LT(r.info.max_residual, 1e-8) << what;
  at::Tensor v = r.eigenvectors;
  EXPECT_LT((at::mm(v.t(), v) - at::eye(k, at::kDouble)).abs().max().item<double>(), 1e-9) << what;
}

TEST(EigshMultiplicity, LanczosFindsBothCopiesOfPoissonDoubleEigenvalues) {
  for (int64_t m : {20, 30}) {
    SparseTensor a = poisson2d(m);
    at::Tensor dense = at::linalg_eigvalsh(a.to_dense().to(at::kDouble));   // float64 reference
    ASSERT_LT((dense - poisson2d_spectrum(m)).abs().max().item<double>(), 1e-12);
    for (int64_t k = 1; k <= 8; ++k) {
      for (Which which : {Which::Smallest, Which::Largest}) expect_every_copy(a, dense, k, which);
    }
  }
}

TEST(EigshMultiplicity, LanczosFindsBothCopiesAtTenThousandRows) {
  SparseTensor a = poisson2d(100);   // dense eigh of 10^4 rows is too slow for a test: the analytic spectrum
  at::Tensor exact = poisson2d_spectrum(100);
  for (int64_t k = 1; k <= 8; ++k) {
    for (Which which : {Which::Smallest, Which::Largest}) expect_every_copy(a, exact, k, which);
  }
}

TEST(EigshMultiplicity, LanczosFindsEveryCopyOfTripleEigenvalues) {
  // diag(B, B, B) for a random symmetric B [50, 50]: each eigenvalue of B is triple
  at::Tensor b = testing::random_matrix(50, 0.1, 0.0, /*symmetric=*/true, 23).to_dense().detach().to(at::kDouble);
  at::Tensor dense = at::block_diag({b, b, b});
  SparseTensor a = SparseTensor::from_dense(dense);
  at::Tensor all = at::linalg_eigvalsh(dense);
  for (int64_t k = 1; k <= 8; ++k) {
    for (Which which : {Which::Smallest, Which::Largest}) expect_every_copy(a, all, k, which);
  }
}

}  // namespace
}  // namespace tessera::sla
