// dsolve's `auto` backend at 1, 2 and 4 ranks (float64): a matrix whose estimated LU factor
// fits options.memory_budget_bytes goes to MUMPS's direct LU, one that does not (the budget
// set to 0 here, not a large matrix) to a native Krylov method: CG with BoomerAMG for an SPD
// matrix, GMRES with BoomerAMG for a non-symmetric one, MINRES for a symmetric one with a
// negative diagonal. SolveInfo says which ran; the solution equals the
// one-process one either way. Without MUMPS the direct case runs the Krylov method; without
// hypre the Krylov method keeps the options' preconditioner.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "sla/backends/mumps/dist_mumps.h"
#include "sla/dist/dist_preconditioner.h"
#include "sla/dist/dsolve_dispatch.h"
#include "tessera/dist/communicator.h"
#include "tessera/sla/dist/dsolve.h"
#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/solve.h"

namespace tessera::sla {
namespace {

double rel_err(const at::Tensor& got, const at::Tensor& want) {
  return (got - want).norm().item<double>() / std::max(1e-300, want.norm().item<double>());
}

SolveOptions auto_with_budget(double bytes) {
  SolveOptions o;   // backend and method auto
  o.memory_budget_bytes = bytes;
  o.rtol = 1e-12;
  return o;
}

class DistAutoDispatch : public ::testing::TestWithParam<bool> {
 protected:
  std::shared_ptr<dist::Communicator> comm = dist::world();

  DSparseTensor distribute(const SparseTensor& a) const {
    const bool metis = GetParam();
    RowPartition part = metis ? RowPartition::metis(a, comm->size()) : RowPartition::contiguous(a.rows(), comm->size());
    return DSparseTensor::from_global(comm, part, a);
  }

  // x from dsolve with `options` against one process's direct solve; returns the SolveInfo.
  SolveInfo solve_and_compare(const SparseTensor& a, const SolveOptions& options) const {
    DSparseTensor d = distribute(a);
    const at::Tensor b = at::cos(at::arange(a.rows(), at::kDouble) * 0.37) + 0.5;
    auto [x, info] = dsolve(d, d.scatter(b), options);
    EXPECT_EQ(info.status, SolveStatus::Converged) << info.message;
    EXPECT_LT(rel_err(d.gather_all(x), solve(a, b).first), 1e-9);
    return info;
  }
};

TEST_P(DistAutoDispatch, SmallEstimateGoesDirect) {
  const SolveInfo info = solve_and_compare(poisson2d(30), auto_with_budget(1e9));
  if (detail::mumps_available()) {
    EXPECT_EQ(info.backend, "mumps");
    EXPECT_EQ(info.method, Method::LU);
  } else {
    EXPECT_EQ(info.backend, "native");
    EXPECT_EQ(info.method, Method::CG);
  }
}

TEST_P(DistAutoDispatch, SpdBeyondTheBudgetRunsCgWithBoomerAmg) {
  const SolveInfo info = solve_and_compare(poisson2d(30), auto_with_budget(0.0));
  EXPECT_EQ(info.backend, "native");
  EXPECT_EQ(info.method, Method::CG);
  if (detail::distributed_boomeramg_available()) EXPECT_LE(info.iterations, 30);
}

TEST_P(DistAutoDispatch, NonsymmetricBeyondTheBudgetRunsGmres) {
  const SolveInfo info = solve_and_compare(convection_diffusion2d(20, 8.0, -5.0), auto_with_budget(0.0));
  EXPECT_EQ(info.backend, "native");
  EXPECT_EQ(info.method, Method::GMRES);
  if (detail::distributed_boomeramg_available()) EXPECT_LE(info.iterations, 30);
}

TEST_P(DistAutoDispatch, SymmetricWithNegativeDiagonalBeyondTheBudgetRunsMinres) {
  const SparseTensor a = poisson2d(12);
  SolveOptions o = auto_with_budget(0.0);
  o.preconditioner = Preconditioner::None;   // kept: no V-cycle for a matrix that is not SPD
  const SolveInfo info = solve_and_compare(a.with_values(-a.values()), o);
  EXPECT_EQ(info.backend, "native");
  EXPECT_EQ(info.method, Method::MINRES);
}

TEST_P(DistAutoDispatch, NamedKrylovMethodIsKept) {
  SolveOptions o = auto_with_budget(1e9);
  o.method = Method::BiCGStab;
  const SolveInfo info = solve_and_compare(convection_diffusion2d(12, 3.0, 1.0), o);
  EXPECT_EQ(info.backend, "native");
  EXPECT_EQ(info.method, Method::BiCGStab);
}

TEST_P(DistAutoDispatch, SummaryIsTheGlobalMatrixs) {
  const SparseTensor a = convection_diffusion2d(9, 3.0, 1.0);
  const detail::DistMatrixSummary s = detail::summarize_distributed(distribute(a));
  EXPECT_EQ(s.nnz, a.nnz());
  EXPECT_EQ(s.bandwidth, 9);   // the ±n neighbours of the 5-point stencil, in global ids
  EXPECT_FALSE(s.symmetric);
  EXPECT_TRUE(s.positive_diagonal);
  const detail::DistMatrixSummary p = detail::summarize_distributed(distribute(poisson2d(9)));
  EXPECT_TRUE(p.symmetric);
  EXPECT_EQ(estimated_factor_bytes(81, p.nnz, p.bandwidth, true), estimated_factor_bytes(poisson2d(9), true));
}

INSTANTIATE_TEST_SUITE_P(Partitions, DistAutoDispatch, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "Metis" : "Contiguous"; });

}  // namespace
}  // namespace tessera::sla
