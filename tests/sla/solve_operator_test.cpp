// solve_operator with a matrix-free operator (diffusion2d(κ)'s finite-volume operator applied
// from κ): the solution equals the sparse solve of the assembled matrix to 1e-10 with every
// Krylov method; gradients in b and κ (and in a convection speed of a non-symmetric
// operator, with the transpose given or taken by autograd) match central finite
// differences; the preconditioner hook is called and cuts CG's iterations; bad input throws.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <functional>

#include "sla/support/diffusion_operator.h"
#include "tessera/core/error.h"
#include "tessera/sla/diffusion.h"
#include "tessera/sla/solve.h"
#include "tessera/sla/solve_operator.h"

namespace tessera::sla {
namespace {

using testing::diffusion_apply;
using testing::smooth_rhs;
using testing::upwind_apply;
using testing::upwind_apply_transposed;
using testing::varied_kappa;

constexpr int64_t kN = 10;   // grid side: 100 unknowns

UserOperator diffusion_operator() {
  UserOperator op;
  op.apply = [](const at::Tensor& x, const std::vector<at::Tensor>& p) { return diffusion_apply(x, p[0]); };
  op.symmetric = true;
  op.rows = kN * kN;
  return op;
}

// A(κ, v) = diffusion(κ) + v D (upwind convection): not symmetric. `own_transpose`: give
// apply_transposed; otherwise A^T comes from autograd through apply.
UserOperator convection_operator(bool own_transpose) {
  UserOperator op;
  op.apply = [](const at::Tensor& x, const std::vector<at::Tensor>& p) {
    return diffusion_apply(x, p[0]) + upwind_apply(x, p[1], kN);
  };
  if (own_transpose) {
    op.apply_transposed = [](const at::Tensor& x, const std::vector<at::Tensor>& p) {
      return diffusion_apply(x, p[0]) + upwind_apply_transposed(x, p[1], kN);
    };
  }
  op.rows = kN * kN;
  return op;
}

OperatorSolveOptions tight(Method method) {
  OperatorSolveOptions o;
  o.method = method;
  o.rtol = 1e-14;
  o.maxiter = 2000;
  return o;
}

double relative_difference(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).norm().item<double>() / b.norm().item<double>();
}

// The dense matrix of an operator, column by column (the reference of non-symmetric cases).
at::Tensor dense_of(const UserOperator& op, const std::vector<at::Tensor>& params) {
  at::Tensor eye = at::eye(op.rows, at::kDouble);
  std::vector<at::Tensor> columns;
  for (int64_t j = 0; j < op.rows; ++j) columns.push_back(op.apply(eye[j], params));
  return at::stack(columns, 1);
}

class SolveOperatorMethods : public ::testing::TestWithParam<Method> {};

TEST_P(SolveOperatorMethods, EqualsTheSparseSolveOfTheAssembledMatrix) {
  const at::Tensor kappa = varied_kappa(kN), b = smooth_rhs(kN * kN);
  auto [x, info] = solve_operator(diffusion_operator(), b, {kappa}, tight(GetParam()));
  ASSERT_EQ(info.status, SolveStatus::Converged) << info.message;
  EXPECT_EQ(info.method, GetParam());
  auto [x_ref, ref_info] = solve(diffusion2d(kappa), b);
  ASSERT_EQ(ref_info.status, SolveStatus::Converged);
  EXPECT_LT(relative_difference(x, x_ref), 1e-10);
  EXPECT_LT(info.residual, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Krylov, SolveOperatorMethods,
                         ::testing::Values(Method::CG, Method::BiCGStab, Method::GMRES, Method::MINRES));

TEST(SolveOperator, GradientsInBAndKappaMatchFiniteDifferencesAndTheSparseSolve) {
  const at::Tensor w = at::cos(at::arange(kN * kN, at::kDouble) * 0.21);   // L = <w, x>
  const UserOperator op = diffusion_operator();
  auto loss = [&](const at::Tensor& b, const at::Tensor& kappa) {
    return at::dot(w, solve_operator(op, b, {kappa}, tight(Method::CG)).first);
  };
  at::Tensor kappa = varied_kappa(kN).requires_grad_(), b = smooth_rhs(kN * kN).requires_grad_();
  loss(b, kappa).backward();
  // the sparse solve's autograd gradients
  at::Tensor kappa_ref = varied_kappa(kN).requires_grad_(), b_ref = smooth_rhs(kN * kN).requires_grad_();
  at::dot(w, solve(diffusion2d(kappa_ref), b_ref).first).backward();
  EXPECT_LT(relative_difference(b.grad(), b_ref.grad()), 1e-9);
  EXPECT_LT(relative_difference(kappa.grad(), kappa_ref.grad()), 1e-9);
  at::NoGradGuard no_grad;
  for (int64_t i : {0, 13, 47, 99}) {   // central differences, entry by entry
    const double hb = 1e-3, hk = 1e-5 * kappa.detach().view({-1})[i].item<double>();
    at::Tensor bp = b.detach().clone(), bm = b.detach().clone();
    bp[i] += hb;
    bm[i] -= hb;
    const double fd_b = (loss(bp, kappa.detach()) - loss(bm, kappa.detach())).item<double>() / (2 * hb);
    EXPECT_NEAR(b.grad()[i].item<double>(), fd_b, 1e-6 * std::abs(fd_b) + 1e-12) << "b[" << i << "]";
    at::Tensor kp = kappa.detach().clone(), km = kappa.detach().clone();
    kp.view({-1})[i] += hk;
    km.view({-1})[i] -= hk;
    const double fd_k = (loss(b.detach(), kp) - loss(b.detach(), km)).item<double>() / (2 * hk);
    EXPECT_NEAR(kappa.grad().view({-1})[i].item<double>(), fd_k, 1e-6 * std::abs(fd_k) + 1e-12) << "kappa[" << i << "]";
  }
}

class SolveOperatorTranspose : public ::testing::TestWithParam<bool> {};

TEST_P(SolveOperatorTranspose, NonSymmetricSolveAndGradientsMatchTheDenseReference) {
  const UserOperator op = convection_operator(/*own_transpose=*/GetParam());
  const at::Tensor w = at::cos(at::arange(kN * kN, at::kDouble) * 0.21);
  auto loss = [&](const at::Tensor& b, const at::Tensor& kappa, const at::Tensor& v) {
    auto [x, info] = solve_operator(op, b, {kappa, v}, tight(Method::Auto));   // Auto: GMRES
    EXPECT_EQ(info.method, Method::GMRES);
    EXPECT_EQ(info.status, SolveStatus::Converged) << info.message;
    return std::make_pair(at::dot(w, x), x);
  };
  at::Tensor kappa = varied_kappa(kN).requires_grad_(), b = smooth_rhs(kN * kN).requires_grad_();
  at::Tensor v = at::full({}, 30.0, at::kDouble).requires_grad_();
  auto [l, x] = loss(b, kappa, v);
  l.backward();
  at::Tensor dense = dense_of(op, {kappa.detach(), v.detach()});
  EXPECT_LT(relative_difference(x.detach(), at::linalg_solve(dense, b.detach())), 1e-10);
  // dL/db = A^{-T} w
  EXPECT_LT(relative_difference(b.grad(), at::linalg_solve(dense.t(), w)), 1e-9);
  at::NoGradGuard no_grad;
  const double hv = 1e-4;
  const double fd_v = (loss(b.detach(), kappa.detach(), v.detach() + hv).first -
                       loss(b.detach(), kappa.detach(), v.detach() - hv).first).item<double>() / (2 * hv);
  EXPECT_NEAR(v.grad().item<double>(), fd_v, 1e-6 * std::abs(fd_v));
  for (int64_t i : {5, 55}) {
    const double hk = 1e-5 * kappa.detach().view({-1})[i].item<double>();
    at::Tensor kp = kappa.detach().clone(), km = kappa.detach().clone();
    kp.view({-1})[i] += hk;
    km.view({-1})[i] -= hk;
    const double fd_k = (loss(b.detach(), kp, v.detach()).first - loss(b.detach(), km, v.detach()).first).item<double>() /
                        (2 * hk);
    EXPECT_NEAR(kappa.grad().view({-1})[i].item<double>(), fd_k, 1e-6 * std::abs(fd_k)) << "kappa[" << i << "]";
  }
}

INSTANTIATE_TEST_SUITE_P(GivenOrByAutograd, SolveOperatorTranspose, ::testing::Bool());

TEST(SolveOperator, SeveralRightHandSidesAreSolvedColumnByColumn) {
  const at::Tensor kappa = varied_kappa(kN);
  const at::Tensor b = at::stack({smooth_rhs(kN * kN), at::ones({kN * kN}, at::kDouble)}, 1).requires_grad_();
  auto [x, info] = solve_operator(diffusion_operator(), b, {kappa}, tight(Method::CG));
  ASSERT_EQ(x.sizes(), b.sizes());
  const SparseTensor a = diffusion2d(kappa);
  EXPECT_LT(relative_difference(x.detach(), solve(a, b.detach()).first), 1e-10);
  x.sum().backward();
  EXPECT_LT(relative_difference(b.grad(), solve(a, at::ones_like(b)).first), 1e-9);
}

TEST(SolveOperator, PreconditionerHookIsUsedInBothDirectionsAndCutsIterations) {
  const at::Tensor kappa = varied_kappa(kN), b = smooth_rhs(kN * kN);
  const at::Tensor inv_diag = diffusion2d(kappa).diagonal().reciprocal();
  OperatorSolveOptions plain = tight(Method::CG), jacobi = tight(Method::CG);
  int64_t calls = 0, transposed_calls = 0;
  jacobi.preconditioner = [&](const at::Tensor& r) { ++calls; return r * inv_diag; };   // M^{-1} r = D^{-1} r
  auto [x0, info0] = solve_operator(diffusion_operator(), b, {kappa}, plain);
  auto [x1, info1] = solve_operator(diffusion_operator(), b, {kappa}, jacobi);
  ASSERT_EQ(info0.status, SolveStatus::Converged);
  ASSERT_EQ(info1.status, SolveStatus::Converged);
  EXPECT_GE(calls, info1.iterations);
  EXPECT_LT(info1.iterations, info0.iterations);
  EXPECT_LT(relative_difference(x1, x0), 1e-10);
  // non-symmetric: the adjoint solve of the backward pass applies the transposed hook
  OperatorSolveOptions gmres = tight(Method::GMRES);
  gmres.preconditioner = jacobi.preconditioner;
  gmres.preconditioner_transposed = [&](const at::Tensor& r) { ++transposed_calls; return r * inv_diag; };
  at::Tensor bg = b.clone().requires_grad_();
  const at::Tensor v = at::full({}, 30.0, at::kDouble);
  const int64_t forward_calls = calls;
  auto [x2, info2] = solve_operator(convection_operator(true), bg, {kappa, v}, gmres);
  ASSERT_EQ(info2.status, SolveStatus::Converged);
  EXPECT_GT(calls, forward_calls);
  EXPECT_EQ(transposed_calls, 0);
  x2.sum().backward();
  EXPECT_GT(transposed_calls, 0);
}

TEST(SolveOperator, NonConvergenceIsReportedNotThrown) {
  OperatorSolveOptions o = tight(Method::CG);
  o.maxiter = 3;
  auto [x, info] = solve_operator(diffusion_operator(), smooth_rhs(kN * kN), {varied_kappa(kN)}, o);
  EXPECT_EQ(info.status, SolveStatus::NotConverged);
  EXPECT_EQ(info.iterations, 3);
  EXPECT_FALSE(info.message.empty());
}

TEST(SolveOperator, FloatVectorsAreSolvedInFloat) {
  const at::Tensor kappa = varied_kappa(kN).to(at::kFloat), b = smooth_rhs(kN * kN).to(at::kFloat);
  OperatorSolveOptions o;
  o.rtol = 1e-5;
  auto [x, info] = solve_operator(diffusion_operator(), b, {kappa}, o);
  EXPECT_EQ(x.scalar_type(), at::kFloat);
  EXPECT_EQ(info.status, SolveStatus::Converged) << info.message;
  EXPECT_LT(relative_difference(x.to(at::kDouble), solve(diffusion2d(kappa.to(at::kDouble)), b.to(at::kDouble)).first),
            1e-4);
}

TEST(SolveOperator, BadInputThrowsClearErrors) {
  const at::Tensor kappa = varied_kappa(kN), b = smooth_rhs(kN * kN);
  const UserOperator op = diffusion_operator();
  EXPECT_THROW(solve_operator(op, smooth_rhs(7), {kappa}), DimensionMismatch);
  EXPECT_THROW(solve_operator(op, b.view({10, 10, 1}), {kappa}), DimensionMismatch);
  UserOperator wrong = op;
  wrong.apply = [](const at::Tensor& x, const std::vector<at::Tensor>&) { return x.narrow(0, 0, 3); };
  EXPECT_THROW(solve_operator(wrong, b, {kappa}), DimensionMismatch);
  UserOperator none = op;
  none.apply = nullptr;
  EXPECT_THROW(solve_operator(none, b, {kappa}), InvalidInput);
  OperatorSolveOptions lu;
  lu.method = Method::LU;
  EXPECT_THROW(solve_operator(op, b, {kappa}, lu), Unsupported);
  at::Tensor nan_b = b.clone();
  nan_b[3] = std::nan("");
  EXPECT_THROW(solve_operator(op, nan_b, {kappa}), InvalidInput);
  EXPECT_THROW(solve_operator(op, b.to(at::kFloat), {kappa}), InvalidInput);   // apply returns float64
  OperatorSolveOptions bad_hook;
  bad_hook.preconditioner = [](const at::Tensor& r) { return r.narrow(0, 0, 1); };
  EXPECT_THROW(solve_operator(op, b, {kappa}, bad_hook), DimensionMismatch);
  // no transpose and an apply that autograd cannot see through: the backward says what to give
  UserOperator opaque = convection_operator(false);
  opaque.apply = [](const at::Tensor& x, const std::vector<at::Tensor>& p) {
    return (diffusion_apply(x, p[0]) + upwind_apply(x, p[1], kN)).detach();
  };
  at::Tensor bg = b.clone().requires_grad_();
  at::Tensor x = solve_operator(opaque, bg, {kappa, at::full({}, 1.0, at::kDouble)}).first;
  EXPECT_THROW(x.sum().backward(), InvalidInput);
}

}  // namespace
}  // namespace tessera::sla
