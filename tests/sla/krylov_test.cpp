// Native Krylov solvers: hand-computed systems, every method on suitable matrices, statuses.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tessera/sla/generators.h"
#include "tessera/sla/solve.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

SolveOptions native(Method method, Preconditioner pc = Preconditioner::Jacobi) {
  SolveOptions o;
  o.backend = Backend::Native;
  o.method = method;
  o.preconditioner = pc;
  return o;
}

TEST(Krylov, HandComputedTwoByTwo) {
  // [[4, 1], [1, 3]] x = [1, 2]  ->  x = [1/11, 7/11]
  auto a = SparseTensor::from_dense(at::tensor({4.0, 1.0, 1.0, 3.0}, at::kDouble).reshape({2, 2}));
  at::Tensor expected = at::tensor({1.0 / 11, 7.0 / 11}, at::kDouble);
  for (Method m : {Method::CG, Method::BiCGStab, Method::GMRES, Method::MINRES}) {
    for (Preconditioner pc : {Preconditioner::None, Preconditioner::Jacobi}) {
      auto [x, info] = solve(a, at::tensor({1.0, 2.0}, at::kDouble), native(m, pc));
      EXPECT_EQ(info.status, SolveStatus::Converged) << to_string(m);
      EXPECT_EQ(info.method, m);
      EXPECT_EQ(info.backend, "native");
      EXPECT_LE(info.iterations, 2) << to_string(m);   // exact in n = 2 steps
      EXPECT_TRUE(at::allclose(x, expected, 1e-12, 1e-12)) << to_string(m);
    }
  }
}

TEST(Krylov, AllMethodsOnPoisson2d) {
  auto a = poisson2d(20);
  at::Tensor b = at::randn({a.rows()}, at::kDouble);
  for (Method m : {Method::CG, Method::BiCGStab, Method::GMRES, Method::MINRES}) {
    auto [x, info] = solve(a, b, native(m));
    EXPECT_EQ(info.status, SolveStatus::Converged) << to_string(m) << ": " << info.message;
    EXPECT_LT(info.residual, 1e-10) << to_string(m);
    EXPECT_LT((matvec(a, x) - b).norm().item<double>() / b.norm().item<double>(), 1e-10);
    EXPECT_GT(info.iterations, 5) << to_string(m);
  }
}

TEST(Krylov, NonSymmetricWithBiCGStabAndGmres) {
  auto a = testing::random_matrix(60, 0.1, 4.0, false, 11);
  at::Tensor b = at::randn({60}, at::kDouble);
  at::Tensor ref = at::linalg_solve(a.to_dense(), b);
  for (Method m : {Method::BiCGStab, Method::GMRES}) {
    auto [x, info] = solve(a, b, native(m));
    EXPECT_EQ(info.status, SolveStatus::Converged) << to_string(m) << ": " << info.message;
    EXPECT_TRUE(at::allclose(x, ref, 1e-8, 1e-8)) << to_string(m);
  }
  SolveOptions small_restart = native(Method::GMRES);
  small_restart.gmres_restart = 5;   // restarted: more iterations, same answer
  auto [x, info] = solve(a, b, small_restart);
  EXPECT_EQ(info.status, SolveStatus::Converged) << info.message;
  EXPECT_TRUE(at::allclose(x, ref, 1e-8, 1e-8));
}

TEST(Krylov, MinresOnSymmetricIndefinite) {
  // symmetric with eigenvalues of both signs: CG fails, MINRES converges
  auto a = testing::random_matrix(40, 0.2, 0.0, true, 13);
  at::Tensor d = at::cat({at::full({20}, 3.0, at::kDouble), at::full({20}, -3.0, at::kDouble)});
  a = SparseTensor::from_dense(a.to_dense() + at::diag(d));
  at::Tensor b = at::randn({40}, at::kDouble);
  auto [x, info] = solve(a, b, native(Method::MINRES));
  EXPECT_EQ(info.status, SolveStatus::Converged) << info.message;
  EXPECT_TRUE(at::allclose(x, at::linalg_solve(a.to_dense(), b), 1e-8, 1e-8));
  auto [xc, cg] = solve(a, b, native(Method::CG, Preconditioner::None));
  EXPECT_EQ(cg.status, SolveStatus::NotPositiveDefinite);
  EXPECT_FALSE(cg.message.empty());
  EXPECT_TRUE(at::isfinite(xc).all().item<bool>());
  // auto method on the native backend: tries CG only for an SPD candidate; this one is not
  SolveOptions automatic;
  automatic.backend = Backend::Native;
  auto [xa, ia] = solve(a, b, automatic);
  EXPECT_EQ(ia.status, SolveStatus::Converged);
  EXPECT_EQ(ia.method, Method::MINRES);
}

TEST(Krylov, ReportsNotConvergedAndSingular) {
  auto a = poisson2d(30);
  at::Tensor b = at::ones({a.rows()}, at::kDouble);
  SolveOptions few = native(Method::CG);
  few.maxiter = 3;
  auto [x, info] = solve(a, b, few);
  EXPECT_EQ(info.status, SolveStatus::NotConverged);
  EXPECT_EQ(info.iterations, 3);
  EXPECT_GT(info.residual, 1e-3);
  EXPECT_TRUE(at::isfinite(x).all().item<bool>());
  // singular: [[1, 1], [1, 1]] x = [1, 0] has no solution
  auto s = SparseTensor::from_dense(at::ones({2, 2}, at::kDouble));
  for (Method m : {Method::BiCGStab, Method::GMRES, Method::MINRES}) {
    auto [xs, is] = solve(s, at::tensor({1.0, 0.0}, at::kDouble), native(m));
    EXPECT_NE(is.status, SolveStatus::Converged) << to_string(m);
    EXPECT_TRUE(at::isfinite(xs).all().item<bool>()) << to_string(m);
  }
}

TEST(Krylov, ZeroRightHandSideAndMultipleColumns) {
  auto a = poisson2d(6);
  auto [x0, i0] = solve(a, at::zeros({36}, at::kDouble), native(Method::CG));
  EXPECT_EQ(i0.status, SolveStatus::Converged);
  EXPECT_EQ(x0.abs().max().item<double>(), 0.0);
  at::Tensor b = at::randn({36, 3}, at::kDouble);
  auto [x, info] = solve(a, b, native(Method::CG));
  EXPECT_EQ(x.sizes(), b.sizes());
  EXPECT_TRUE(at::allclose(x, at::linalg_solve(a.to_dense(), b), 1e-9, 1e-9));
}

}  // namespace
}  // namespace tessera::sla
