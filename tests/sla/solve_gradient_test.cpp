// Gradients of solve() by finite differences (float64, relative error < 1e-6) for every
// backend configuration: native Krylov methods always, direct backends when compiled in
// (a name for which make_direct_backend throws NotCompiled is skipped).

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/sla/backends/direct_backend.h"
#include "tessera/sla/backends/iterative_backend.h"
#include "tessera/sla/matrix_market.h"
#include "tessera/sla/solve.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

struct Config {
  std::string backend;
  Method method;
  bool symmetric_only;   // CG and MINRES (and Cholesky / LDLT) need a symmetric matrix
};

void PrintTo(const Config& c, std::ostream* os) { *os << c.backend << "/" << to_string(c.method); }

std::string config_name(const ::testing::TestParamInfo<Config>& info) {
  return info.param.backend + "_" + to_string(info.param.method);
}

class SolveGradient : public ::testing::TestWithParam<Config> {
 protected:
  void SetUp() override {
    const Config& c = GetParam();
    const bool krylov = c.method == Method::CG || c.method == Method::BiCGStab;
    if (c.backend == "eigen" && krylov) {   // Eigen's iterative solvers
      try {
        make_iterative_backend("eigen");
      } catch (const NotCompiled&) {
        GTEST_SKIP() << "eigen iterative backend is not compiled in";
      }
    } else if (c.backend != "native") {
      try {
        make_direct_backend(c.backend);
      } catch (const NotCompiled&) {
        GTEST_SKIP() << "backend " << c.backend << " is not compiled in";
      }
      if (!make_direct_backend(c.backend)->supports(c.method)) GTEST_SKIP() << "no " << to_string(c.method);
    }
    options_.backend = parse_backend(c.backend);
    options_.method = c.method;
    options_.rtol = 1e-14;
    options_.maxiter = 1000;
  }

  /// Checks d<w, x>/d values and d<w, x>/d b against central differences.
  void check(const SparseTensor& a, const at::Tensor& b) {
    at::Tensor w = at::randn(b.sizes(), at::kDouble);
    at::Tensor v = a.values().clone().requires_grad_(), bb = b.clone().requires_grad_();
    auto [x, info] = solve(a.with_values(v), bb, options_);
    ASSERT_EQ(info.status, SolveStatus::Converged) << info.message;
    (x * w).sum().backward();
    auto loss_v = [&](const at::Tensor& p) { return (solve(a.with_values(p), b, options_).first * w).sum().item<double>(); };
    auto loss_b = [&](const at::Tensor& p) { return (solve(a, p, options_).first * w).sum().item<double>(); };
    // symmetric-only solvers reject a matrix with one entry perturbed: perturb mirror pairs
    const double value_error = GetParam().symmetric_only
                                   ? testing::fd_relative_error_symmetric(loss_v, a, v.grad())
                                   : testing::fd_relative_error(loss_v, a.values(), v.grad());
    EXPECT_LT(value_error, 1e-6);
    EXPECT_LT(testing::fd_relative_error(loss_b, b, bb.grad()), 1e-6);
  }

  SolveOptions options_;
};

// One ctest entry per backend and storage kind keeps the suite's process count small.
TEST_P(SolveGradient, GeneralStorageOneAndMultipleRightHandSides) {
  const bool sym = GetParam().symmetric_only;
  auto a = testing::random_matrix(8, 0.3, 4.0, sym, 21);
  check(a, at::randn({8}, at::kDouble));
  auto a2 = testing::random_matrix(7, 0.3, 4.0, sym, 22);
  check(a2, at::randn({7, 3}, at::kDouble));
}

TEST_P(SolveGradient, BatchedValuesAndSymmetricStorage) {
  const bool sym = GetParam().symmetric_only;
  at::Tensor d0 = testing::random_matrix(6, 0.4, 4.0, sym, 23).to_dense();
  at::Tensor d1 = d0 + 0.3 * (d0 != 0).to(at::kDouble) * (sym ? at::ones({6, 6}, at::kDouble) : at::rand({6, 6}, at::kDouble));
  auto a = SparseTensor::from_dense(at::stack({d0, d1}));
  check(a, at::randn({2, 6}, at::kDouble));
  // lower triangle as a symmetric MatrixMarket file stores it; gradient w.r.t. those entries
  at::Tensor dense = testing::random_matrix(7, 0.4, 4.0, /*symmetric=*/true, 24).to_dense();
  at::Tensor lower = at::tril(dense).nonzero();
  at::Tensor row = lower.select(1, 0).contiguous(), col = lower.select(1, 1).contiguous();
  at::Tensor stored = dense.index({row, col});
  at::Tensor b = at::randn({7}, at::kDouble), w = at::randn({7}, at::kDouble);
  auto build = [&](const at::Tensor& s) { return SparseTensor::from_symmetric_coo(s, row, col, 7); };
  at::Tensor leaf = stored.clone().requires_grad_();
  auto [x, info] = solve(build(leaf), b, options_);
  ASSERT_EQ(info.status, SolveStatus::Converged);
  (x * w).sum().backward();
  auto loss = [&](const at::Tensor& s) { return (solve(build(s), b, options_).first * w).sum().item<double>(); };
  EXPECT_LT(testing::fd_relative_error(loss, stored, leaf.grad()), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(
    Backends, SolveGradient,
    ::testing::Values(Config{"native", Method::CG, true}, Config{"native", Method::MINRES, true},
                      Config{"native", Method::BiCGStab, false}, Config{"native", Method::GMRES, false},
                      Config{"eigen", Method::Cholesky, true}, Config{"eigen", Method::LDLT, true},
                      Config{"eigen", Method::LU, false}, Config{"eigen", Method::CG, true},
                      Config{"eigen", Method::BiCGStab, false}, Config{"cholmod", Method::Cholesky, true},
                      Config{"umfpack", Method::LU, false}, Config{"superlu", Method::LU, false}),
    config_name);

TEST(SolveGradientAuto, AdjointMatchesDenseReference) {
  // dense reference: x = A^{-1} b, dL/db = A^{-T} w, dL/dA = -(A^{-T} w) x^T
  auto a = testing::random_matrix(10, 0.3, 4.0, false, 25);
  at::Tensor b = at::randn({10}, at::kDouble), w = at::randn({10}, at::kDouble);
  at::Tensor v = a.values().clone().requires_grad_();
  auto [x, info] = solve(a.with_values(v), b);
  (x * w).sum().backward();
  at::Tensor lambda = at::linalg_solve(a.to_dense().t(), w);
  at::Tensor dense_grad = -at::outer(lambda, x.detach());
  at::Tensor on_pattern = dense_grad.reshape({-1}).index_select(0, a.row_indices() * 10 + a.col_idx().to(at::kLong));
  EXPECT_TRUE(at::allclose(v.grad(), on_pattern, 1e-8, 1e-9));
}

}  // namespace
}  // namespace tessera::sla
