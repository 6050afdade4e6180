// dnonlinear_solve (Newton across ranks, Jacobian assembled by colouring, linear steps by
// dsolve) at 1, 2 and 4 ranks in float64: the solution equals one process's
// nonlinear_solve to 1e-10 with the native GMRES and with MUMPS, on contiguous and METIS
// rows, for a symmetric and a non-symmetric Jacobian; gradients with respect to θ (the
// adjoint by dsolve_transposed) match central finite differences.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>

#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/sla/dist/dnonlinear_solve.h"
#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/nonlinear_solve.h"
#include "tessera/sla/solve.h"

namespace tessera::sla {
namespace {

// A: 2D Poisson, or with upwind-like couplings (upper neighbours x1.2, lower x0.8: a
// non-symmetric J that stays an M-matrix).
SparseTensor operator_matrix(bool skew) {
  SparseTensor a = poisson2d(10);
  if (!skew) return a;
  at::Tensor v = a.values().clone();
  at::Tensor col = a.col_idx().to(at::kLong), row = a.row_indices();
  return a.with_values(at::where(col > row, v * 1.2, at::where(col < row, v * 0.8, v)));
}

// F(u, θ) = A u + θ0 u^3 - θ1 (1 + sin(x)) on each rank's rows.
at::Tensor rhs_of(int64_t n) { return 1.0 + at::sin(at::arange(n, at::kDouble) * 0.1); }

struct Case {
  bool metis;
  bool skew;
  bool mumps;
};

NonlinearOptions options(bool mumps) {
  NonlinearOptions o;
  o.rtol = 1e-13;
  o.atol = 1e-13;
  o.linear.rtol = 1e-13;
  o.linear.preconditioner = Preconditioner::Jacobi;
  if (mumps) o.linear.backend = Backend::Mumps;
  return o;
}

class DistNonlinear : public ::testing::TestWithParam<Case> {
 protected:
  std::shared_ptr<dist::Communicator> comm = dist::world();
};

// u*(θ) distributed; returns u* (this rank's rows) and fills info.
std::pair<at::Tensor, NonlinearInfo> solve_distributed(const DSparseTensor& d, const at::Tensor& b_owned,
                                                       const at::Tensor& theta, bool mumps) {
  auto residual = [&](const at::Tensor& u, const std::vector<at::Tensor>& p) {
    return d.matvec(u) + p[0][0] * u.pow(3) - p[0][1] * b_owned;
  };
  return dnonlinear_solve(residual, at::zeros({d.owned_rows()}, at::kDouble), {theta}, d, options(mumps));
}

TEST_P(DistNonlinear, SolutionEqualsOneProcessAndGradientMatchesFiniteDifferences) {
  const Case& c = GetParam();
  SparseTensor a = operator_matrix(c.skew);
  const int64_t n = a.rows();
  RowPartition part = c.metis ? RowPartition::metis(a, comm->size()) : RowPartition::contiguous(a.rows(), comm->size());
  DSparseTensor d = DSparseTensor::from_global(comm, part, a);
  const at::Tensor b = rhs_of(n), b_owned = d.scatter(b);
  at::Tensor theta = at::tensor({2.0, 10.0}, at::kDouble).set_requires_grad(true);
  std::pair<at::Tensor, NonlinearInfo> r;
  try {
    r = solve_distributed(d, b_owned, theta, c.mumps);
  } catch (const NotCompiled&) {
    GTEST_SKIP() << "MUMPS is not compiled in";
  }
  ASSERT_EQ(r.second.status, SolveStatus::Converged) << r.second.message;
  // one process, its own nonlinear_solve
  auto residual_one = [&](const at::Tensor& u, const std::vector<at::Tensor>& p) {
    return matvec(a, u) + p[0][0] * u.pow(3) - p[0][1] * b;
  };
  NonlinearOptions one_options = options(false);
  one_options.linear = SolveOptions{};
  one_options.jacobian_pattern = a;
  auto [u1, info1] = nonlinear_solve(residual_one, at::zeros({n}, at::kDouble), {theta.detach()}, one_options);
  ASSERT_EQ(info1.status, SolveStatus::Converged) << info1.message;
  const at::Tensor u = d.gather_all(r.first.detach());
  EXPECT_LT((u - u1).abs().max().item<double>(), 1e-10 * u1.abs().max().item<double>()) << comm->size() << " ranks";
  // L = sum over ranks of <w, u_owned>
  const at::Tensor w = d.scatter(at::cos(at::arange(n, at::kDouble) * 0.3));
  (w * r.first).sum().backward();
  at::Tensor grad = theta.grad().clone();
  comm->all_reduce(grad, dist::ReduceOp::Sum);   // each rank's rows give their part
  auto loss = [&](const at::Tensor& t) {
    auto [ut, info] = solve_distributed(d, b_owned, t, c.mumps);
    EXPECT_EQ(info.status, SolveStatus::Converged) << info.message;
    at::Tensor l = (w * ut).sum().reshape({1}).detach();
    comm->all_reduce(l, dist::ReduceOp::Sum);
    return l.item<double>();
  };
  const at::Tensor dt = at::tensor({0.7, -0.3}, at::kDouble);
  const double h = 1e-6;
  const double fd = (loss(theta.detach() + h * dt) - loss(theta.detach() - h * dt)) / (2 * h);
  const double an = (grad * dt).sum().item<double>();
  EXPECT_NEAR(an, fd, 1e-6 * std::max(1.0, std::abs(fd))) << comm->size() << " ranks";
}

INSTANTIATE_TEST_SUITE_P(Cases, DistNonlinear,
                         ::testing::Values(Case{false, false, false}, Case{true, true, false}, Case{true, false, true},
                                           Case{false, true, true}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.metis ? "Metis" : "Contiguous") +
                                  (info.param.skew ? "Nonsymmetric" : "Symmetric") +
                                  (info.param.mumps ? "Mumps" : "Gmres");
                         });

TEST(DistNonlinearOptions, AndersonIsSingleProcess) {
  auto comm = dist::world();
  SparseTensor a = poisson2d(6);
  DSparseTensor d = DSparseTensor::from_global(comm, RowPartition::contiguous(a.rows(), comm->size()), a);
  NonlinearOptions o;
  o.anderson = true;
  auto residual = [&](const at::Tensor& u, const std::vector<at::Tensor>&) { return d.matvec(u) - 1.0; };
  EXPECT_THROW(dnonlinear_solve(residual, at::zeros({d.owned_rows()}, at::kDouble), {}, d, o), Unsupported);
}

}  // namespace
}  // namespace tessera::sla
