// Eigen's CG and BiCGSTAB as the iterative backend Backend::Eigen (built with TESSERA_WITH_EIGEN).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "sla/support/test_matrices.h"
#include "tessera/sla/backends/iterative_backend.h"

#if TESSERA_WITH_EIGEN
namespace tessera::sla::testing {
namespace {

SparseTensor sparse(const CsrMatrix& a) { return SparseTensor::from_csr(a.row_ptr, a.col_idx, a.values, a.rows, a.cols); }

SolveOptions krylov(Method method, Preconditioner preconditioner, double rtol = 1e-10) {
  SolveOptions options;
  options.backend = Backend::Eigen;
  options.method = method;
  options.preconditioner = preconditioner;
  options.rtol = rtol;
  return options;
}

TEST(EigenIterative, ConvergesOnPoisson) {
  auto eigen = make_iterative_backend(Backend::Eigen);
  const CsrMatrix a = poisson2d(30);  // n = 900, SPD, weakly diagonally dominant
  const at::Tensor b = csr_apply(a, at::ones({a.rows}, at::kDouble), false);
  for (Method method : {Method::CG, Method::BiCGStab}) {
    for (Preconditioner p : {Preconditioner::Jacobi, Preconditioner::None}) {
      SCOPED_TRACE(std::string(to_string(method)) + " " + to_string(p));
      IterativeResult r = eigen->solve(sparse(a), b, krylov(method, p), false);
      EXPECT_EQ(r.info.status, SolveStatus::Converged) << r.info.message;
      EXPECT_EQ(r.info.backend, "eigen");
      EXPECT_EQ(r.info.method, method);
      EXPECT_GT(r.info.iterations, 0);
      EXPECT_LT(r.info.iterations, 900);
      const double residual = relative_residual(a, r.x, b, false);
      EXPECT_LT(residual, 1e-9);
      EXPECT_NEAR(r.info.residual, residual, 1e-12);  // the reported residual is the true one
      EXPECT_LT((r.x - 1.0).abs().max().item<double>(), 1e-6);
    }
  }
}

TEST(EigenIterative, ReportsNotConvergedWhenMaxiterTooSmall) {
  auto eigen = make_iterative_backend(Backend::Eigen);
  const CsrMatrix a = poisson2d(30);
  const at::Tensor b = csr_apply(a, at::ones({a.rows}, at::kDouble), false);
  for (Method method : {Method::CG, Method::BiCGStab}) {
    SolveOptions options = krylov(method, Preconditioner::Jacobi);
    options.maxiter = 3;
    IterativeResult r = eigen->solve(sparse(a), b, options, false);
    EXPECT_EQ(r.info.status, SolveStatus::NotConverged) << to_string(method);
    EXPECT_LE(r.info.iterations, 3);
    EXPECT_GT(r.info.residual, 1e-10);
    EXPECT_NE(r.info.message.find("not_converged"), std::string::npos) << r.info.message;
    EXPECT_TRUE(at::isfinite(r.x).all().item<bool>());
  }
}

TEST(EigenIterative, TransposedAndMultipleRightHandSides) {
  auto eigen = make_iterative_backend(Backend::Eigen);
  const CsrMatrix a = poisson2d(20, 0.4);  // non-symmetric convection-diffusion
  at::manual_seed(11);
  const at::Tensor xs = at::randn({a.rows, 3}, at::kDouble);
  for (bool transpose : {false, true}) {
    const at::Tensor b = csr_apply(a, xs, transpose);
    IterativeResult r = eigen->solve(sparse(a), b, krylov(Method::BiCGStab, Preconditioner::Jacobi), transpose);
    ASSERT_EQ(r.x.sizes(), b.sizes());
    EXPECT_EQ(r.info.status, SolveStatus::Converged) << r.info.message;
    EXPECT_LT(relative_residual(a, r.x, b, transpose), 1e-9) << "transpose " << transpose;
    EXPECT_LT((r.x - xs).abs().max().item<double>(), 1e-6);
  }
}

TEST(EigenIterative, AbsoluteToleranceAndZeroRightHandSide) {
  auto eigen = make_iterative_backend(Backend::Eigen);
  const CsrMatrix a = poisson2d(10);
  const at::Tensor b = at::zeros({a.rows, 2}, at::kDouble);
  b.select(1, 1).fill_(1.0);
  SolveOptions options = krylov(Method::CG, Preconditioner::Jacobi, 0.0);
  options.atol = 1e-6;  // ||r|| <= 1e-6 only
  IterativeResult r = eigen->solve(sparse(a), b, options, false);
  EXPECT_EQ(r.info.status, SolveStatus::Converged);
  EXPECT_TRUE(at::equal(r.x.select(1, 0), at::zeros({a.rows}, at::kDouble)));  // b = 0 -> x = 0
  const at::Tensor r1 = csr_apply(a, r.x.select(1, 1).contiguous(), false) - b.select(1, 1);
  EXPECT_LE(r1.norm().item<double>(), 1e-6);
}

// CG on [[0, 1], [1, 0]]: p^T A p = 0 in the first step. A numerical failure is a status,
// never a Converged result carrying NaN.
TEST(EigenIterative, IndefiniteMatrixIsNotReportedConverged) {
  auto eigen = make_iterative_backend(Backend::Eigen);
  const CsrMatrix a = csr_from_dense(at::tensor({0.0, 1.0, 1.0, 0.0}, at::kDouble).reshape({2, 2}));
  const at::Tensor b = at::tensor({1.0, 0.0}, at::kDouble);
  IterativeResult r = eigen->solve(sparse(a), b, krylov(Method::CG, Preconditioner::None), false);
  EXPECT_NE(r.info.status, SolveStatus::Converged);
  EXPECT_FALSE(r.info.message.empty());
  if (!at::isfinite(r.x).all().item<bool>()) EXPECT_EQ(r.info.status, SolveStatus::Breakdown);
}

TEST(EigenIterative, RejectsBadOptions) {
  auto eigen = make_iterative_backend(Backend::Eigen);
  const CsrMatrix a = poisson2d(3);
  const at::Tensor b = at::ones({a.rows}, at::kDouble);
  EXPECT_FALSE(eigen->supports(Method::GMRES));
  EXPECT_THROW(eigen->solve(sparse(a), b, krylov(Method::GMRES, Preconditioner::None), false), tessera::Unsupported);
  EXPECT_THROW(eigen->solve(sparse(a), b, krylov(Method::CG, Preconditioner::None, -1.0), false), tessera::InvalidInput);
  SolveOptions negative = krylov(Method::CG, Preconditioner::None);
  negative.maxiter = -1;
  EXPECT_THROW(eigen->solve(sparse(a), b, negative, false), tessera::InvalidInput);
  EXPECT_THROW(eigen->solve(sparse(a), at::ones({4}, at::kDouble), krylov(Method::CG, Preconditioner::None), false),
               tessera::DimensionMismatch);
  EXPECT_THROW(make_iterative_backend("cholmod"), tessera::InvalidInput);
}

}  // namespace
}  // namespace tessera::sla::testing
#endif
