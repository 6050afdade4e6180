// eigsh: eigenvalues against dense eigh and the analytic 2D Poisson spectrum, both
// backends (native, spectra, lanczos), shift-invert, gradients by finite differences, and bad input.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "sla/eigsh/lanczos.h"
#include "tessera/core/error.h"
#include "tessera/sla/eigsh.h"
#include "tessera/sla/generators.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

using testing::random_matrix;

/// The k eigenvalues of A wanted by `which`, ascending, from dense eigh.
at::Tensor dense_reference(const SparseTensor& a, int64_t k, Which which, double sigma = 0.0) {
  at::Tensor evals = at::linalg_eigvalsh(a.to_dense().detach());
  at::Tensor key = which == Which::Largest ? -evals : which == Which::Smallest ? evals : (evals - sigma).abs();
  at::Tensor idx = std::get<1>(key.sort()).narrow(0, 0, k);
  return std::get<0>(evals.index_select(0, idx).sort());
}

void expect_pairs(const SparseTensor& a, const EigshResult& r, const at::Tensor& expected, double tol) {
  ASSERT_EQ(r.info.status, SolveStatus::Converged) << r.info.message;
  EXPECT_LT((r.eigenvalues - expected).abs().max().item<double>(), tol) << r.eigenvalues << expected;
  EXPECT_LT(r.info.max_residual, 1e-8);
  at::Tensor v = r.eigenvectors;
  EXPECT_LT((at::mm(v.t(), v) - at::eye(v.size(1), at::kDouble)).abs().max().item<double>(), 1e-9);   // V^T V = I
}

/// Like testing::fd_relative_error_symmetric on a sample of the entries (every 12th), so
/// that the check stays fast: entry p moves with its mirror q, the derivative is g_p + g_q.
double sampled_fd_symmetric(const std::function<double(const at::Tensor&)>& f, const SparseTensor& a,
                            const at::Tensor& g) {
  const int64_t n = a.cols();
  at::Tensor key = a.row_indices() * n + a.col_idx().to(at::kLong);
  at::Tensor mirror = at::searchsorted(key, a.col_idx().to(at::kLong) * n + a.row_indices());
  std::vector<double> fd, ad;
  const double h = 1e-5;
  for (int64_t p = 0; p < a.nnz(); p += 12) {
    const int64_t q = mirror[p].item<int64_t>();
    at::Tensor plus = a.values().detach().clone(), minus = plus.clone();
    plus[p] += h;
    minus[p] -= h;
    if (q != p) {
      plus[q] += h;
      minus[q] -= h;
    }
    fd.push_back((f(plus) - f(minus)) / (2 * h));
    ad.push_back(g[p].item<double>() + (q != p ? g[q].item<double>() : 0.0));
  }
  at::Tensor fdt = at::tensor(fd, at::kDouble), adt = at::tensor(ad, at::kDouble);
  return (adt - fdt).norm().item<double>() / fdt.norm().item<double>();
}

class EigshBackends : public ::testing::TestWithParam<std::string> {};

TEST_P(EigshBackends, MatchesDenseEighAtBothEndsAndNearSigma) {
  if (GetParam() == std::string("spectra") && !detail::spectra_available()) GTEST_SKIP() << "no Spectra in this build";
  SparseTensor a = random_matrix(80, 0.08, 0.0, /*symmetric=*/true, 3);
  for (Which which : {Which::Largest, Which::Smallest, Which::Nearest}) {
    if (which == Which::Nearest && compiled_direct_backends().empty()) continue;   // shift-invert factorises
    EigshOptions o;
    o.backend = parse_eigsh_backend(GetParam());
    o.k = 4;
    o.which = which;
    o.sigma = 0.1;
    EigshResult r = eigsh(a, o);
    expect_pairs(a, r, dense_reference(a, 4, which, o.sigma), 1e-9);
  }
}

INSTANTIATE_TEST_SUITE_P(Eigsh, EigshBackends, ::testing::Values("native", "spectra", "lanczos"));

TEST(Eigsh, Poisson2dMatchesTheAnalyticSpectrumWithMultipleEigenvalues) {
  const int64_t n = 14;
  // generators.h: diagonal 4, neighbours -1, so λ_ij = 4 - 2 cos(iπ/(n+1)) - 2 cos(jπ/(n+1))
  std::vector<double> exact;
  for (int64_t i = 1; i <= n; ++i) {
    for (int64_t j = 1; j <= n; ++j) {
      exact.push_back(4 - 2 * std::cos(i * M_PI / (n + 1)) - 2 * std::cos(j * M_PI / (n + 1)));
    }
  }
  std::sort(exact.begin(), exact.end());
  at::Tensor all = at::tensor(exact, at::kDouble);
  const int64_t k = 6;
  EigshOptions o;
  o.k = k;
  o.which = Which::Smallest;
  EigshResult small = eigsh(poisson2d(n), o);
  expect_pairs(poisson2d(n), small, all.narrow(0, 0, k), 1e-9);   // λ_12 = λ_21 etc. are found twice
  o.which = Which::Largest;
  EigshResult large = eigsh(poisson2d(n), o);
  expect_pairs(poisson2d(n), large, all.narrow(0, all.size(0) - k, k), 1e-9);
  o.which = Which::Nearest;
  o.sigma = 1.3;   // inside the spectrum, by shift-invert; the 7 nearest end at a clear gap
  o.k = 7;
  EigshResult mid = eigsh(poisson2d(n), o);
  at::Tensor key = std::get<1>((all - 1.3).abs().sort()).narrow(0, 0, 7);
  expect_pairs(poisson2d(n), mid, std::get<0>(all.index_select(0, key).sort()), 1e-9);
}

TEST(Eigsh, EigenvalueGradientMatchesFiniteDifferences) {
  SparseTensor a = random_matrix(40, 0.06, 0.0, true, 5);
  at::Tensor c = at::tensor({1.0, -2.0, 0.5}, at::kDouble);
  EigshOptions o;
  o.k = 3;
  o.which = Which::Smallest;
  o.tol = 1e-12;
  at::Tensor v = a.values().clone().requires_grad_();
  (eigsh(a.with_values(v), o).eigenvalues * c).sum().backward();   // L = sum_i c_i λ_i
  auto f = [&](const at::Tensor& p) { return (eigsh(a.with_values(p), o).eigenvalues * c).sum().item<double>(); };
  EXPECT_LT(sampled_fd_symmetric(f, a, v.grad()), 1e-6);
}

TEST(Eigsh, EigenvectorGradientMatchesFiniteDifferences) {
  SparseTensor a = random_matrix(40, 0.06, 0.0, true, 6);
  at::manual_seed(7);
  at::Tensor w = at::randn({40, 2}, at::kDouble);
  EigshOptions o;
  o.k = 2;
  o.which = Which::Largest;
  o.tol = 1e-12;
  at::Tensor v = a.values().clone().requires_grad_();
  EigshResult r = eigsh(a.with_values(v), o);
  ((r.eigenvectors * w).sum() + r.eigenvalues.sum()).backward();
  auto f = [&](const at::Tensor& p) {
    EigshResult q = eigsh(a.with_values(p), o);
    return ((q.eigenvectors * w).sum() + q.eigenvalues.sum()).item<double>();
  };
  EXPECT_LT(sampled_fd_symmetric(f, a, v.grad()), 1e-6);
}

TEST(Eigsh, GradientIsHellmannFeynmanOnThePattern) {
  SparseTensor a = poisson2d(8);
  at::Tensor v = a.values().clone().requires_grad_();
  EigshOptions o;
  o.k = 1;
  o.which = Which::Smallest;
  EigshResult r = eigsh(a.with_values(v), o);
  r.eigenvalues.sum().backward();
  at::Tensor x = r.eigenvectors.select(1, 0).detach();
  at::Tensor expected = x.index_select(0, a.row_indices()) * x.index_select(0, a.col_idx().to(at::kLong));   // v_i v_j
  EXPECT_LT((v.grad() - expected).abs().max().item<double>(), 1e-10);
}

TEST(Eigsh, BadInputIsRejectedOrReported) {
  SparseTensor a = poisson2d(4);
  EigshOptions o;
  o.k = 16;
  EXPECT_THROW(eigsh(a, o), InvalidInput);   // k >= n
  o.k = 0;
  EXPECT_THROW(eigsh(a, o), InvalidInput);
  o.k = 2;
  EXPECT_THROW(eigsh(SparseTensor::from_dense(at::ones({3, 4}, at::kDouble)), o), DimensionMismatch);
  EXPECT_THROW(eigsh(random_matrix(20, 0.2, 1.0, false, 1), o), InvalidInput);   // not symmetric
  EXPECT_THROW(parse_eigsh_backend("nope"), tessera::InvalidInput);
  // sigma exactly an eigenvalue: A - σ I is singular, reported
  SparseTensor d = SparseTensor::from_dense(at::diag(at::arange(1, 31, at::kDouble)));
  EigshOptions near;
  near.k = 2;
  near.which = Which::Nearest;
  near.sigma = 3.0;
  EigshResult r = eigsh(d, near);
  EXPECT_EQ(r.info.status, SolveStatus::Singular);
  EXPECT_FALSE(r.info.message.empty());
  // a double eigenvalue has no eigenvector gradient (the block method finds both copies;
  // a single-vector method may find one only on so small a matrix)
  EigshOptions three;
  three.which = Which::Smallest;
  three.backend = EigshBackend::Native;
  at::Tensor v = poisson2d(6).values().clone().requires_grad_();
  three.k = 3;   // λ_12 = λ_21: the 2nd and 3rd eigenvalues are equal
  EigshResult q = eigsh(poisson2d(6).with_values(v), three);
  EXPECT_THROW(q.eigenvectors.select(1, 1).sum().backward(), Unsupported);
}

}  // namespace
}  // namespace tessera::sla
