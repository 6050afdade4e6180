// solve(): dispatch, property detection, batched and multiple right-hand sides, bad input.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "tessera/core/error.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/matrix_market.h"
#include "tessera/sla/solve.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

TEST(Properties, Poisson2dIsAnSpdCandidateButOnlyWeaklyDominant) {
  auto p = detect_properties(poisson2d(8));
  EXPECT_TRUE(p.symmetric);
  EXPECT_TRUE(p.positive_diagonal);
  EXPECT_TRUE(p.diagonally_dominant);   // weakly: |4| >= 4 in the interior
  EXPECT_TRUE(p.spd_candidate());
  auto g = detect_properties(testing::random_matrix(10, 0.3, 0.0, false, 3));
  EXPECT_FALSE(g.symmetric);
  auto neg = detect_properties(SparseTensor::from_dense(at::tensor({-1.0, 0.0, 0.0, 2.0}, at::kDouble).reshape({2, 2})));
  EXPECT_TRUE(neg.symmetric);
  EXPECT_FALSE(neg.positive_diagonal);
  EXPECT_TRUE(neg.diagonally_dominant);
}

TEST(Dispatch, AutoPicksByPropertiesAndSize) {
  auto a = poisson2d(10);
  SolverChoice c = choose_solver(a, detect_properties(a), SolveOptions{});
  // a direct SPD backend when one is compiled in, otherwise native CG
  EXPECT_TRUE(c.backend == Backend::Cholmod || c.backend == Backend::Eigen ||
              (c.backend == Backend::Native && c.method == Method::CG))
      << to_string(c.backend);
  auto g = testing::random_matrix(10, 0.3, 4.0, false, 4);
  SolverChoice cg = choose_solver(g, detect_properties(g), SolveOptions{});
  EXPECT_TRUE(cg.method == Method::LU || cg.method == Method::BiCGStab) << to_string(cg.method);
  SolveOptions small_budget;
  small_budget.memory_budget_bytes = 1000;   // everything is "large" now
  SolverChoice big = choose_solver(a, detect_properties(a), small_budget);
  EXPECT_EQ(big.backend, Backend::Native);
  EXPECT_EQ(big.method, Method::CG);
  SolveOptions named;
  named.method = Method::GMRES;
  EXPECT_EQ(choose_solver(a, detect_properties(a), named).backend, Backend::Native);
}

TEST(Dispatch, NamedBackendNotCompiledThrows) {
  auto a = poisson2d(4);
  for (Backend name : {Backend::Eigen, Backend::Cholmod, Backend::Umfpack, Backend::Superlu}) {
    SolveOptions o;
    o.backend = name;
    try {
      auto [x, info] = solve(a, at::ones({16}, at::kDouble), o);
      EXPECT_EQ(info.status, SolveStatus::Converged) << to_string(name);   // compiled in: it works
    } catch (const NotCompiled&) {
      SUCCEED() << to_string(name) << " not compiled";
    }
  }
  SolveOptions bad;
  bad.backend = Backend::Native;
  bad.method = Method::Cholesky;
  EXPECT_THROW(solve(a, at::ones({16}, at::kDouble), bad), Unsupported);
}

TEST(Solve, AutoOnPoissonAndSuiteSparse) {
  auto a = poisson2d(16);
  at::Tensor b = matvec(a, at::ones({256}, at::kDouble));   // b = A 1
  auto [x, info] = solve(a, b);
  EXPECT_EQ(info.status, SolveStatus::Converged) << info.message;
  EXPECT_TRUE(at::allclose(x, at::ones({256}, at::kDouble), 1e-8, 1e-8));
  auto west = read_sparse_matrix_market(std::string(TESSERA_SHARED_DATA) + "/matrices/west0067.mtx");
  at::Tensor bw = matvec(west, at::ones({67}, at::kDouble));
  SolveOptions gm;
  gm.backend = Backend::Native;
  gm.method = Method::GMRES;
  gm.gmres_restart = 67;
  auto [xw, iw] = solve(west, bw, gm);
  EXPECT_EQ(iw.status, SolveStatus::Converged) << iw.message;
  EXPECT_LT(iw.residual, 1e-9);
}

TEST(Solve, BatchedValuesWithBatchedAndSharedRhs) {
  at::Tensor d = poisson2d(4).to_dense();
  at::Tensor dd = at::stack({d, 2.0 * d, d + at::eye(16, at::kDouble)});
  auto a = SparseTensor::from_dense(dd);
  at::Tensor b = at::randn({3, 16}, at::kDouble);
  auto [x, info] = solve(a, b);
  EXPECT_EQ(x.sizes(), b.sizes());
  EXPECT_TRUE(at::allclose(x, at::linalg_solve(dd, b.unsqueeze(-1)).squeeze(-1), 1e-8, 1e-8));
  at::Tensor shared = at::randn({16, 2}, at::kDouble);
  auto [xs, is] = solve(a, shared);
  EXPECT_EQ(xs.sizes(), (std::vector<int64_t>{3, 16, 2}));
  EXPECT_TRUE(at::allclose(xs, at::linalg_solve(dd, shared), 1e-8, 1e-8));
}

TEST(Solve, Float32) {
  auto a = poisson2d(8, at::kFloat);
  SolveOptions o;
  o.rtol = 1e-6;
  auto [x, info] = solve(a, at::ones({64}, at::kFloat), o);
  EXPECT_EQ(x.scalar_type(), at::kFloat);
  EXPECT_EQ(info.status, SolveStatus::Converged);
  EXPECT_LT(info.residual, 1e-5);
}

TEST(Solve, Float32GradientsMatchFloat64) {
  auto a = poisson2d(6);
  at::Tensor b = at::randn({36}, at::kDouble), w = at::randn({36}, at::kDouble);
  auto grads = [&](at::ScalarType t) {
    at::Tensor v = a.values().to(t).requires_grad_(), bb = b.to(t).requires_grad_();
    SolveOptions o;
    o.rtol = 1e-12;
    auto [x, info] = solve(a.with_values(v), bb, o);
    EXPECT_EQ(x.scalar_type(), t);
    (x * w.to(t)).sum().backward();
    return std::make_pair(v.grad().to(at::kDouble), bb.grad().to(at::kDouble));
  };
  auto [v32, b32] = grads(at::kFloat);
  auto [v64, b64] = grads(at::kDouble);
  EXPECT_TRUE(at::allclose(v32, v64, 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(b32, b64, 1e-4, 1e-5));
}

TEST(Solve, BadInput) {
  auto a = poisson2d(3);
  EXPECT_THROW(solve(a, at::ones({8}, at::kDouble)), DimensionMismatch);
  EXPECT_THROW(solve(a, at::ones({9}, at::kFloat)), InvalidInput);
  at::Tensor nan_values = a.values().clone();
  nan_values[2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(solve(a.with_values(nan_values), at::ones({9}, at::kDouble)), InvalidInput);
  at::Tensor nan_b = at::ones({9}, at::kDouble);
  nan_b[0] = std::numeric_limits<double>::infinity();
  EXPECT_THROW(solve(a, nan_b), InvalidInput);
  // the same checks on float32 values, a strided b [n, k], and a vector long enough to be
  // scanned by several threads (NaN in its last entry)
  at::Tensor inf_f32 = a.values().to(at::kFloat).clone();
  inf_f32[4] = -std::numeric_limits<float>::infinity();
  EXPECT_THROW(solve(a.with_values(inf_f32), at::ones({9}, at::kFloat)), InvalidInput);
  at::Tensor strided_b = at::ones({2, 9}, at::kDouble);
  strided_b[1][8] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(solve(a, strided_b.t()), InvalidInput);
  auto big = poisson2d(300);
  at::Tensor big_b = at::ones({big.rows()}, at::kDouble);
  big_b[big.rows() - 1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(solve(big, big_b), InvalidInput);
  auto empty = SparseTensor::from_coo(at::zeros({0}, at::kDouble), at::zeros({0}, at::kLong), at::zeros({0}, at::kLong), 0, 0);
  EXPECT_THROW(solve(empty, at::zeros({0}, at::kDouble)), InvalidInput);
  auto rect = SparseTensor::from_dense(at::ones({2, 3}, at::kDouble));
  EXPECT_THROW(solve(rect, at::ones({2}, at::kDouble)), DimensionMismatch);
}

TEST(Solve, SingularMatrixIsReportedNotSilent) {
  // dwt_878 with unit values is singular (README of the data set)
  auto mm = read_matrix_market(std::string(TESSERA_SHARED_DATA) + "/matrices/dwt_878.mtx");
  auto a = mm.to_sparse();
  at::Tensor b = at::randn({878}, at::kDouble);
  auto [x, info] = solve(a, b);
  EXPECT_NE(info.status, SolveStatus::Converged);
  EXPECT_FALSE(info.message.empty());
  // either NaN flagged by the status (direct) or the last finite iterate (Krylov)
  if (info.status != SolveStatus::Singular) EXPECT_TRUE(at::isfinite(x).all().item<bool>());
}

}  // namespace
}  // namespace tessera::sla
