// nonlinear_solve on a 2D Bratu problem (symmetric J) and a convection-diffusion problem
// with a quadratic convection term (non-symmetric J): assembled and matrix-free Newton,
// Anderson, gradients by finite differences, bad input.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/nonlinear_solve.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

constexpr int64_t kGrid = 10;
const double kH2 = 1.0 / ((kGrid + 1) * (kGrid + 1));

/// Bratu: F(u; λ, f) = A u - h^2 λ exp(u) - h^2 f, A the 5-point Laplacian (diagonal 4).
ResidualFn bratu(const SparseTensor& a) {
  return [a](const at::Tensor& u, const std::vector<at::Tensor>& p) {
    return matvec(a, u) - kH2 * p[0] * at::exp(u) - kH2 * p[1];
  };
}

/// B u = u_{i+1} - u_i along the grid's x direction (a non-symmetric difference).
SparseTensor forward_difference(int64_t n) {
  std::vector<int64_t> rows, cols;
  std::vector<double> vals;
  for (int64_t i = 0; i < n; ++i) {
    rows.push_back(i), cols.push_back(i), vals.push_back(-1.0);
    if ((i + 1) % kGrid != 0) rows.push_back(i), cols.push_back(i + 1), vals.push_back(1.0);
  }
  return SparseTensor::from_coo(at::tensor(vals, at::kDouble), at::tensor(rows), at::tensor(cols), n, n);
}

/// F(u; c, f) = A u + c u ⊙ (B u) - h^2 f: J = A + c (diag(B u) + diag(u) B), non-symmetric.
ResidualFn convection(const SparseTensor& a, const SparseTensor& b) {
  return [a, b](const at::Tensor& u, const std::vector<at::Tensor>& p) {
    return matvec(a, u) + p[0] * u * matvec(b, u) - kH2 * p[1];
  };
}

struct Problem {
  SparseTensor a = poisson2d(kGrid);
  int64_t n = kGrid * kGrid;
  at::Tensor lambda = at::tensor({2.0}, at::kDouble);
  at::Tensor f = at::linspace(0.5, 1.5, kGrid * kGrid, at::kDouble);
};

TEST(NonlinearSolve, BratuNewtonAssembledMatrixFreeAndAndersonAgree) {
  Problem s;
  NonlinearOptions assembled;
  assembled.jacobian_pattern = s.a;
  auto [u1, i1] = nonlinear_solve(bratu(s.a), at::zeros({s.n}, at::kDouble), {s.lambda, s.f}, assembled);
  ASSERT_EQ(i1.status, SolveStatus::Converged) << i1.message;
  EXPECT_LE(i1.iterations, 8);
  EXPECT_LE(i1.colors, 9);   // a 5-point pattern needs few colours
  EXPECT_LT(bratu(s.a)(u1, {s.lambda, s.f}).norm().item<double>(), 1e-10);
  auto [u2, i2] = nonlinear_solve(bratu(s.a), at::zeros({s.n}, at::kDouble), {s.lambda, s.f});   // matrix-free
  ASSERT_EQ(i2.status, SolveStatus::Converged) << i2.message;
  EXPECT_GT(i2.linear_iterations, 0);
  EXPECT_LT((u1 - u2).abs().max().item<double>(), 1e-10);
  NonlinearOptions aa = assembled;
  aa.anderson = true;
  auto [u3, i3] = nonlinear_solve(bratu(s.a), at::zeros({s.n}, at::kDouble), {s.lambda, s.f}, aa);
  ASSERT_EQ(i3.status, SolveStatus::Converged) << i3.message;
  EXPECT_LT((u1 - u3).abs().max().item<double>(), 1e-9);
}

void check_gradient(const ResidualFn& fn, const Problem& s, const at::Tensor& p0, const NonlinearOptions& o) {
  at::manual_seed(3);
  at::Tensor w = at::randn({s.n}, at::kDouble);
  at::Tensor c = p0.clone().requires_grad_(), f = s.f.clone().requires_grad_();
  auto [u, info] = nonlinear_solve(fn, at::zeros({s.n}, at::kDouble), {c, f}, o);
  ASSERT_EQ(info.status, SolveStatus::Converged) << info.message;
  (u * w).sum().backward();   // L = <w, u*>
  auto loss_c = [&](const at::Tensor& p) {
    return (nonlinear_solve(fn, at::zeros({s.n}, at::kDouble), {p, s.f}, o).first * w).sum().item<double>();
  };
  auto loss_f = [&](const at::Tensor& p) {
    return (nonlinear_solve(fn, at::zeros({s.n}, at::kDouble), {p0, p}, o).first * w).sum().item<double>();
  };
  EXPECT_LT(testing::fd_relative_error(loss_c, p0, c.grad()), 1e-6);
  at::Tensor few = at::arange(0, s.n, 17);   // a sample of f's entries keeps the test fast
  at::Tensor fd_f = at::zeros({few.size(0)}, at::kDouble);
  const double h = 1e-5;
  for (int64_t k = 0; k < few.size(0); ++k) {
    at::Tensor plus = s.f.clone(), minus = s.f.clone();
    plus[few[k]] += h;
    minus[few[k]] -= h;
    fd_f[k] = (loss_f(plus) - loss_f(minus)) / (2 * h);
  }
  at::Tensor ad = f.grad().index_select(0, few);
  EXPECT_LT((ad - fd_f).norm().item<double>() / fd_f.norm().item<double>(), 1e-6);
}

TEST(NonlinearSolve, BratuGradientMatchesFiniteDifferences) {
  Problem s;
  NonlinearOptions o;
  o.jacobian_pattern = s.a;
  o.rtol = 1e-14;
  check_gradient(bratu(s.a), s, s.lambda, o);
}

TEST(NonlinearSolve, NonSymmetricJacobianGradientAssembledAndMatrixFree) {
  Problem s;
  SparseTensor b = forward_difference(s.n);
  SparseTensor pattern = SparseTensor::from_coo(
      at::cat({s.a.values(), b.values()}), at::cat({s.a.row_indices(), b.row_indices()}),
      at::cat({s.a.col_idx().to(at::kLong), b.col_idx().to(at::kLong)}), s.n, s.n);   // pattern(A) ∪ pattern(B)
  at::Tensor c0 = at::tensor({5.0}, at::kDouble);
  NonlinearOptions o;
  o.jacobian_pattern = pattern;
  o.rtol = 1e-14;
  check_gradient(convection(s.a, b), s, c0, o);
  NonlinearOptions free;
  free.rtol = 1e-14;
  check_gradient(convection(s.a, b), s, c0, free);
}

TEST(NonlinearSolve, BadInputAndNonConvergence) {
  Problem s;
  auto wrong_shape = [](const at::Tensor& u, const std::vector<at::Tensor>&) { return u.narrow(0, 0, 3); };
  EXPECT_THROW(nonlinear_solve(wrong_shape, at::zeros({5}, at::kDouble), {}), DimensionMismatch);
  auto nan = [](const at::Tensor& u, const std::vector<at::Tensor>&) { return u * std::nan(""); };
  EXPECT_THROW(nonlinear_solve(nan, at::zeros({5}, at::kDouble), {}), InvalidInput);
  NonlinearOptions o;
  o.maxiter = 1;
  o.jacobian_pattern = s.a;
  auto [u, info] = nonlinear_solve(bratu(s.a), at::zeros({s.n}, at::kDouble), {s.lambda, s.f}, o);
  EXPECT_EQ(info.status, SolveStatus::NotConverged);
  EXPECT_FALSE(info.message.empty());
  // no solution: F(u) = u^2 + 1
  auto none = [](const at::Tensor& u, const std::vector<at::Tensor>&) { return u * u + 1.0; };
  auto [v, vi] = nonlinear_solve(none, at::ones({4}, at::kDouble), {});
  EXPECT_NE(vi.status, SolveStatus::Converged);
}

}  // namespace
}  // namespace tessera::sla
