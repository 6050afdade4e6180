#pragma once
// Helpers shared by the sla tests: random matrices and finite-difference gradient checks.

#include <ATen/ATen.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "tessera/sla/backends/direct_backend.h"
#include "tessera/sla/solve.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla::testing {

/// True when the direct backend is compiled into this build (a TESSERA_WITH_* switch).
inline bool compiled(Backend backend) {
  const std::vector<Backend> all = compiled_direct_backends();
  return std::find(all.begin(), all.end(), backend) != all.end();
}

/// For tests of what needs CHOLMOD and UMFPACK (logdet): GTEST_SKIP when either is off.
#define TESSERA_SKIP_WITHOUT_SUITESPARSE()                                                              \
  if (!::tessera::sla::testing::compiled(::tessera::sla::Backend::Cholmod) ||                         \
      !::tessera::sla::testing::compiled(::tessera::sla::Backend::Umfpack))                           \
  GTEST_SKIP() << "CHOLMOD or UMFPACK is switched off in this build"

/// Expects a small symmetric matrix to be positive definite: every compiled Cholesky
/// (CHOLMOD, Eigen) factorises it, and its smallest eigenvalue (dense) is positive.
inline void expect_positive_definite(const SparseTensor& a) {
  for (Backend backend : {Backend::Cholmod, Backend::Eigen}) {
    if (!compiled(backend)) continue;
    SolveOptions chol;
    chol.backend = backend;
    chol.method = Method::Cholesky;
    auto [y, info] = solve(a, at::ones({a.rows()}, at::kDouble), chol);
    EXPECT_EQ(info.status, SolveStatus::Converged) << to_string(backend) << ": " << info.message;
  }
  EXPECT_GT(at::linalg_eigvalsh(a.to_dense()).min().item<double>(), 0.0);
}

/// Random sparse n x n matrix (float64): about `density` of the entries, plus the diagonal
/// shifted by `shift` (large shift: well conditioned). `symmetric` mirrors it.
inline SparseTensor random_matrix(int64_t n, double density, double shift, bool symmetric, uint64_t seed) {
  at::manual_seed(seed);
  at::Tensor dense = at::rand({n, n}, at::kDouble) * (at::rand({n, n}, at::kDouble) < density).to(at::kDouble);
  dense = dense - 0.5 * (dense != 0).to(at::kDouble);
  if (symmetric) dense = dense + dense.t();
  dense = dense + shift * at::eye(n, at::kDouble);
  return SparseTensor::from_dense(dense);
}

/// Relative error ||g - g_fd|| / ||g_fd|| of the gradient `g` of f at p against central
/// differences with step h.
inline double fd_relative_error(const std::function<double(const at::Tensor&)>& f, const at::Tensor& p,
                                const at::Tensor& g, double h = 1e-5) {
  at::Tensor flat = p.detach().clone().reshape({-1});
  at::Tensor fd = at::zeros_like(flat);
  for (int64_t i = 0; i < flat.numel(); ++i) {
    at::Tensor plus = flat.clone(), minus = flat.clone();
    plus[i] += h;
    minus[i] -= h;
    fd[i] = (f(plus.reshape(p.sizes())) - f(minus.reshape(p.sizes()))) / (2 * h);   // dL/dp_i
  }
  return (g.reshape({-1}) - fd).norm().item<double>() / std::max(fd.norm().item<double>(), 1e-300);
}

/// Like fd_relative_error for the values of a symmetric matrix `a` in general storage, when
/// the solver only accepts symmetric matrices: entry p = (i, j) is perturbed together with
/// its mirror q = (j, i), so the derivative along that direction is g_p + g_q (g_p when
/// i = j). Values may be batched [B, nnz]; pairs stay within one batch element.
inline double fd_relative_error_symmetric(const std::function<double(const at::Tensor&)>& f,
                                          const SparseTensor& a, const at::Tensor& g, double h = 1e-5) {
  const int64_t n = a.cols();
  at::Tensor key = a.row_indices() * n + a.col_idx().to(at::kLong);            // row-major, sorted
  at::Tensor mirror = at::searchsorted(key, a.col_idx().to(at::kLong) * n + a.row_indices());
  const int64_t nnz = a.nnz();
  at::Tensor values = a.values().detach().reshape({-1, nnz});
  at::Tensor grads = g.reshape({-1, nnz});
  at::Tensor fd = at::zeros_like(values), expected = at::zeros_like(values);
  for (int64_t batch = 0; batch < values.size(0); ++batch) {
    for (int64_t p = 0; p < nnz; ++p) {
      const int64_t q = mirror[p].item<int64_t>();
      at::Tensor plus = values.clone(), minus = values.clone();
      plus[batch][p] += h;
      minus[batch][p] -= h;
      if (q != p) {
        plus[batch][q] += h;
        minus[batch][q] -= h;
      }
      fd[batch][p] = (f(plus.reshape(a.values().sizes())) - f(minus.reshape(a.values().sizes()))) / (2 * h);
      expected[batch][p] = grads[batch][p] + (q != p ? grads[batch][q] : at::zeros({}, at::kDouble));
    }
  }
  return (expected - fd).norm().item<double>() / std::max(fd.norm().item<double>(), 1e-300);
}

}  // namespace tessera::sla::testing
