// hypre's BoomerAMG as the preconditioner of native CG: solves to tolerance in few
// iterations and agrees with CG + Jacobi; NotCompiled (skipped) in builds without hypre.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/solve.h"

namespace tessera::sla {
namespace {

TEST(BoomerAmg, PreconditionedCgSolvesPoissonToTolerance) {
  const SparseTensor a = poisson2d(96);
  at::manual_seed(11);
  const at::Tensor b = at::rand({a.rows()}, at::kDouble);
  SolveOptions o;
  o.backend = Backend::Native;
  o.method = Method::CG;
  o.rtol = 1e-10;
  o.preconditioner = Preconditioner::BoomerAMG;
  std::pair<at::Tensor, SolveInfo> result;
  try {
    result = solve(a, b, o);
  } catch (const NotCompiled&) {
    GTEST_SKIP() << "hypre is not compiled in";
  }
  const auto& [x, info] = result;
  EXPECT_EQ(info.status, SolveStatus::Converged) << info.message;
  EXPECT_LE(info.residual, 1e-10);
  EXPECT_LE(info.iterations, 20);
  o.preconditioner = Preconditioner::Jacobi;
  auto [xj, ij] = solve(a, b, o);
  EXPECT_GT(ij.iterations, 4 * info.iterations);
  EXPECT_LT((x - xj).abs().max().item<double>(), 1e-7 * xj.abs().max().item<double>());
  // the adjoint solve reuses the set-up (A symmetric): gradient of sum(x) is A^{-1} 1
  at::Tensor bb = b.clone().requires_grad_();
  o.preconditioner = Preconditioner::BoomerAMG;
  solve(a, bb, o).first.sum().backward();
  auto [ones_solution, io] = solve(a, at::ones({a.rows()}, at::kDouble), o);
  EXPECT_LT((bb.grad() - ones_solution).abs().max().item<double>(), 1e-7 * ones_solution.abs().max().item<double>());
}

}  // namespace
}  // namespace tessera::sla
