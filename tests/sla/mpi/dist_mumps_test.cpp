// MUMPS as the distributed direct solve of dsolve (backend mumps), at 1, 2 and 4 ranks
// (float64): on 2D Poisson and on SuiteSparse matrices (symmetric and general, contiguous and
// METIS partitions) the relative residual is at most 1e-10 and the solution equals the
// one-process direct solve; gradients of a loss of the solution with respect to A's values
// and b match central finite differences (the adjoint reuses the LU factors: A^T λ = g);
// a singular matrix throws InvalidInput naming MUMPS's code on every rank. Every test is
// skipped in builds without MUMPS.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cctype>
#include <string>

#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/sla/dist/dsolve.h"
#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/matrix_market.h"
#include "tessera/sla/solve.h"

namespace tessera::sla {
namespace {

double rel_err(const at::Tensor& got, const at::Tensor& want) {
  return (got - want).norm().item<double>() / std::max(1e-300, want.norm().item<double>());
}

SolveOptions mumps() {
  SolveOptions o;
  o.backend = Backend::Mumps;
  return o;
}

// A distributed solve that is NotCompiled without MUMPS: the test is skipped on every rank.
#define SOLVE_OR_SKIP(result, call)              \
  try {                                          \
    result = call;                               \
  } catch (const NotCompiled&) {                 \
    GTEST_SKIP() << "MUMPS is not compiled in";  \
  }

SparseTensor shared_matrix(const std::string& name) {
  return read_matrix_market(std::string(TESSERA_SHARED_DATA) + "/matrices/" + name + ".mtx").to_sparse();
}

struct Case {
  std::string matrix;  // "poisson2d" or a file of shared/data/matrices
  bool metis;
  double solution_tol;  // against the one-process direct solve: about cond(A) * 1e-16
};

class DistMumps : public ::testing::TestWithParam<Case> {
 protected:
  std::shared_ptr<dist::Communicator> comm = dist::world();
};

TEST_P(DistMumps, ResidualAndSolutionMatchOneProcess) {
  const Case& c = GetParam();
  SparseTensor a = c.matrix == "poisson2d" ? poisson2d(60) : shared_matrix(c.matrix);
  const at::Tensor b = at::cos(at::arange(a.rows(), at::kDouble) * 0.37) + 0.5;
  RowPartition part = c.metis ? RowPartition::metis(a, comm->size()) : RowPartition::contiguous(a.rows(), comm->size());
  DSparseTensor d = DSparseTensor::from_global(comm, part, a);
  std::pair<at::Tensor, SolveInfo> result;
  SOLVE_OR_SKIP(result, dsolve(d, d.scatter(b), mumps()));
  const SolveInfo& info = result.second;
  EXPECT_EQ(info.status, SolveStatus::Converged) << info.message;
  EXPECT_EQ(info.backend, "mumps");
  EXPECT_EQ(info.method, Method::LU);
  EXPECT_LE(info.residual, 1e-10);
  const at::Tensor x = d.gather_all(result.first);
  EXPECT_LE((a.to_dense().mv(x) - b).norm().item<double>() / b.norm().item<double>(), 1e-10);
  auto [x1, info1] = solve(a, b);  // this process alone, its own direct backend
  ASSERT_EQ(info1.status, SolveStatus::Converged) << info1.message;
  EXPECT_LT(rel_err(x, x1), c.solution_tol) << comm->size() << " ranks";
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.matrix + (info.param.metis ? "Metis" : "Contiguous");
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Matrices, DistMumps,
                         ::testing::Values(Case{"poisson2d", false, 1e-12}, Case{"poisson2d", true, 1e-12},
                                           Case{"494_bus", true, 1e-8}, Case{"west0067", false, 1e-8},
                                           Case{"olm1000", true, 1e-8}, Case{"LFAT5", false, 1e-6},
                                           Case{"impcol_a", true, 1e-6}, Case{"bcsstk13", true, 1e-4}),
                         case_name);

TEST(DistMumpsColumns, SeveralRightHandSidesAndTransposedSystem) {
  auto comm = dist::world();
  SparseTensor a = shared_matrix("west0067");
  DSparseTensor d = DSparseTensor::from_global(comm, RowPartition::metis(a, comm->size()), a);
  const at::Tensor b = at::stack({at::ones({a.rows()}, at::kDouble), at::arange(a.rows(), at::kDouble)}, 1);
  std::pair<at::Tensor, SolveInfo> result;
  SOLVE_OR_SKIP(result, dsolve(d, d.scatter(b), mumps()));
  EXPECT_LE(result.second.residual, 1e-10);
  EXPECT_LT(rel_err(d.gather_all(result.first), at::linalg_solve(a.to_dense(), b)), 1e-10);
}

// L(v, b) = <w, x> with A(v) x = b, summed over the ranks (every rank gets L).
double global_loss(const std::shared_ptr<dist::Communicator>& comm, const RowPartition& part, const SparseTensor& a,
                   const at::Tensor& values, const at::Tensor& b, const at::Tensor& w) {
  DSparseTensor d = DSparseTensor::from_global(comm, part, a.with_values(values));
  at::Tensor local = (d.scatter(w) * dsolve(d, d.scatter(b), mumps()).first).sum().reshape({1});
  comm->all_reduce(local, dist::ReduceOp::Sum);
  return local.item<double>();
}

TEST(DistMumpsGradients, LossOfSolutionMatchesFiniteDifferences) {
  auto comm = dist::world();
  for (const char* name : {"west0067", "poisson2d"}) {
    SparseTensor a = std::string(name) == "poisson2d" ? poisson2d(12) : shared_matrix(name);
    const int64_t n = a.rows();
    RowPartition part = RowPartition::metis(a, comm->size());
    const at::Tensor v0 = a.values().to(at::kDouble);
    const at::Tensor b0 = at::sin(at::arange(n, at::kDouble) * 0.11) + 1.0;
    const at::Tensor w = at::cos(at::arange(n, at::kDouble) * 0.05);
    // analytic: one adjoint solve A^T λ = w from the forward factors
    at::Tensor values = v0.clone().set_requires_grad(true);
    at::Tensor b = b0.clone().set_requires_grad(true);
    DSparseTensor d = DSparseTensor::from_global(comm, part, a.with_values(values));
    std::pair<at::Tensor, SolveInfo> result;
    SOLVE_OR_SKIP(result, dsolve(d, d.scatter(b), mumps()));
    (d.scatter(w) * result.first).sum().backward();
    at::Tensor g_values = values.grad().clone(), g_b = b.grad().clone();
    comm->all_reduce(g_values, dist::ReduceOp::Sum);  // each rank's rows contribute their part
    comm->all_reduce(g_b, dist::ReduceOp::Sum);
    // central differences along fixed directions: dL = (L(+h) - L(-h)) / 2h
    const at::Tensor dv = at::sin(at::arange(v0.numel(), at::kDouble) * 1.3) * v0.abs().clamp_min(1e-3);
    const at::Tensor db = at::cos(at::arange(n, at::kDouble) * 0.7);
    const double h = 1e-6;
    const double fd_v = (global_loss(comm, part, a, v0 + h * dv, b0, w) - global_loss(comm, part, a, v0 - h * dv, b0, w)) /
                        (2 * h);
    const double fd_b = (global_loss(comm, part, a, v0, b0 + h * db, w) - global_loss(comm, part, a, v0, b0 - h * db, w)) /
                        (2 * h);
    const double an_v = (g_values * dv).sum().item<double>();
    const double an_b = (g_b * db).sum().item<double>();
    EXPECT_NEAR(an_v, fd_v, 1e-6 * std::abs(fd_v)) << name;
    EXPECT_NEAR(an_b, fd_b, 1e-6 * std::abs(fd_b)) << name;
  }
}

TEST(DistMumpsErrors, SingularMatrixThrowsOnEveryRankNamingTheCode) {
  auto comm = dist::world();
  // dwt_878 with unit values is singular (shared/data/matrices/README.md)
  auto mm = read_matrix_market(std::string(TESSERA_SHARED_DATA) + "/matrices/dwt_878.mtx");
  SparseTensor a = mm.to_sparse();
  DSparseTensor d = DSparseTensor::from_global(comm, RowPartition::contiguous(a.rows(), comm->size()), a);
  try {
    dsolve(d, d.scatter(at::ones({a.rows()}, at::kDouble)), mumps());
    FAIL() << "expected InvalidInput on rank " << comm->rank();
  } catch (const NotCompiled&) {
    GTEST_SKIP() << "MUMPS is not compiled in";
  } catch (const InvalidInput& e) {
    const std::string what = e.message();
    EXPECT_NE(what.find("MUMPS factorisation failed"), std::string::npos) << what;
    // a zero pivot is INFOG(1) = -10; a tiny one is counted by null-pivot detection, INFOG(28)
    EXPECT_TRUE(what.find("INFOG(1) = -10") != std::string::npos || what.find("INFOG(28) = ") != std::string::npos)
        << what;
    EXPECT_NE(what.find("singular"), std::string::npos) << what;
  }
  // the ranks are still in step: a collective after the error completes
  at::Tensor one = at::ones({1}, at::kDouble);
  comm->all_reduce(one, dist::ReduceOp::Sum);
  EXPECT_EQ(one.item<double>(), comm->size());
}

TEST(DistMumpsOptions, KrylovMethodsAreRejectedAndOneProcessSolvePointsToDsolve) {
  auto comm = dist::world();
  SparseTensor a = poisson2d(6);
  DSparseTensor d = DSparseTensor::from_global(comm, RowPartition::contiguous(a.rows(), comm->size()), a);
  SolveOptions o = mumps();
  o.method = Method::CG;
  EXPECT_THROW(dsolve(d, d.scatter(at::ones({a.rows()}, at::kDouble)), o), Unsupported);
  EXPECT_THROW(solve(a, at::ones({a.rows()}, at::kDouble), mumps()), Unsupported);
}

}  // namespace
}  // namespace tessera::sla
