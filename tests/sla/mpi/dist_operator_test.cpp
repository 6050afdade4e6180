// dsolve_operator at 1, 2 and 4 ranks in float64: a matrix-free operator that gathers x
// itself (dist::differentiable::all_gather) gives one process's solve_operator solution to
// 1e-10 and its gradients in b, κ and a convection speed (summed over the ranks), with CG and
// a Jacobi hook and with GMRES whose transpose comes from autograd through the collective;
// an operator that is DSparseTensor::matvec (halo exchange) gives dsolve's solution,
// iterations and gradients.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "sla/support/diffusion_operator.h"
#include "tessera/dist/communicator.h"
#include "tessera/dist/differentiable.h"
#include "tessera/sla/diffusion.h"
#include "tessera/sla/dist/dsolve.h"
#include "tessera/sla/dist/dsolve_operator.h"
#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/solve_operator.h"

namespace tessera::sla {
namespace {

using testing::diffusion_apply;
using testing::smooth_rhs;
using testing::upwind_apply;
using testing::varied_kappa;

constexpr int64_t kN = 10;   // grid side: 100 unknowns, split in contiguous blocks

// A(κ, v) x = diffusion(κ) x (+ v D x when convective) on the whole vector.
at::Tensor global_apply(const at::Tensor& x, const std::vector<at::Tensor>& p, bool convective) {
  at::Tensor y = diffusion_apply(x, p[0]);
  return convective ? y + upwind_apply(x, p[1], kN) : y;
}

class DistOperator : public ::testing::TestWithParam<bool> {   // param: convective (non-symmetric)
 protected:
  std::shared_ptr<dist::Communicator> comm = dist::world();
};

TEST_P(DistOperator, GatheringOperatorEqualsOneProcessWithGradients) {
  const bool convective = GetParam();
  const std::vector<int64_t> counts = dist::balanced_counts(kN * kN, comm->size());
  int64_t offset = 0;
  for (int r = 0; r < comm->rank(); ++r) offset += counts[r];
  const int64_t rows = counts[comm->rank()];
  UserOperator op;   // this rank's rows of A x; gathers x itself (differentiably)
  op.apply = [this, offset, rows, convective](const at::Tensor& x, const std::vector<at::Tensor>& p) {
    at::Tensor full = dist::differentiable::all_gather(comm, x);
    return global_apply(full, p, convective).narrow(0, offset, rows);
  };
  op.symmetric = !convective;   // convective: A^T by autograd through the all-gather
  op.rows = rows;
  const at::Tensor inv_diag = diffusion2d(varied_kappa(kN)).diagonal().reciprocal();
  OperatorSolveOptions o;
  o.rtol = 1e-13;
  o.maxiter = 2000;
  const at::Tensor owned_inv_diag = inv_diag.narrow(0, offset, rows);
  o.preconditioner = [owned_inv_diag](const at::Tensor& r) { return r * owned_inv_diag; };   // Jacobi
  const at::Tensor w = at::cos(at::arange(kN * kN, at::kDouble) * 0.21);   // L = <w, x>
  auto params = [&] {
    return std::vector<at::Tensor>{varied_kappa(kN).requires_grad_(), at::full({}, 30.0, at::kDouble).requires_grad_()};
  };
  // one process
  UserOperator one;
  one.apply = [convective](const at::Tensor& x, const std::vector<at::Tensor>& p) { return global_apply(x, p, convective); };
  one.symmetric = !convective;
  one.rows = kN * kN;
  OperatorSolveOptions one_o = o;
  one_o.preconditioner = [inv_diag](const at::Tensor& r) { return r * inv_diag; };
  std::vector<at::Tensor> p1 = params();
  at::Tensor b1 = smooth_rhs(kN * kN).requires_grad_();
  auto [x1, info1] = solve_operator(one, b1, p1, one_o);
  ASSERT_EQ(info1.status, SolveStatus::Converged) << info1.message;
  at::dot(w, x1).backward();
  // across ranks
  std::vector<at::Tensor> p = params();
  at::Tensor b = smooth_rhs(kN * kN).narrow(0, offset, rows).clone().requires_grad_();
  auto [x, info] = dsolve_operator(op, b, p, comm, o);
  ASSERT_EQ(info.status, SolveStatus::Converged) << info.message;
  EXPECT_EQ(info.method, convective ? Method::GMRES : Method::CG);
  EXPECT_LE(std::abs(info.iterations - info1.iterations), 1) << comm->size() << " ranks";
  const at::Tensor x_all = comm->all_gather(x.detach(), counts);
  EXPECT_LT((x_all - x1.detach()).norm().item<double>(), 1e-10 * x1.norm().item<double>()) << comm->size() << " ranks";
  (w.narrow(0, offset, rows) * x).sum().backward();   // L = sum over ranks of <w_r, x_r>
  const at::Tensor b_grad = b1.grad().narrow(0, offset, rows);
  EXPECT_LT((b.grad() - b_grad).norm().item<double>(), 1e-9 * b1.grad().norm().item<double>() + 1e-300);
  for (size_t i = 0; i < (convective ? 2u : 1u); ++i) {
    at::Tensor g = p[i].grad().reshape({-1}).clone();   // v is 0-d; collectives take rows
    comm->all_reduce(g, dist::ReduceOp::Sum);   // each rank's rows give their part
    EXPECT_LT((g - p1[i].grad().reshape({-1})).norm().item<double>(), 1e-9 * p1[i].grad().norm().item<double>())
        << "parameter " << i << ", " << comm->size() << " ranks";
  }
}

INSTANTIATE_TEST_SUITE_P(Operators, DistOperator, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "ConvectiveGmres" : "DiffusionCg");
                         });

TEST(DistOperatorMatvec, HaloExchangingOperatorEqualsDsolve) {
  auto comm = dist::world();
  const SparseTensor a = diffusion2d(varied_kappa(kN));
  const DSparseTensor d = DSparseTensor::from_global(comm, RowPartition::contiguous(a.rows(), comm->size()), a);
  const at::Tensor b_global = smooth_rhs(kN * kN), w_owned = d.scatter(at::cos(at::arange(kN * kN, at::kDouble)));
  UserOperator op;
  op.apply = [d](const at::Tensor& x, const std::vector<at::Tensor>& p) { return d.with_values(p[0]).matvec(x); };
  op.symmetric = true;
  op.rows = d.owned_rows();
  OperatorSolveOptions o;
  o.method = Method::CG;
  o.rtol = 1e-12;
  const at::Tensor inv_diag = d.diagonal().reciprocal();
  o.preconditioner = [inv_diag](const at::Tensor& r) { return r * inv_diag; };
  at::Tensor values = d.values().detach().clone().requires_grad_(), b = d.scatter(b_global).requires_grad_();
  auto [x, info] = dsolve_operator(op, b, {values}, comm, o);
  ASSERT_EQ(info.status, SolveStatus::Converged) << info.message;
  (w_owned * x).sum().backward();
  SolveOptions so;
  so.method = Method::CG;
  so.rtol = 1e-12;
  so.preconditioner = Preconditioner::Jacobi;
  at::Tensor values2 = d.values().detach().clone().requires_grad_(), b2 = d.scatter(b_global).requires_grad_();
  auto [x2, info2] = dsolve(d.with_values(values2), b2, so);
  (w_owned * x2).sum().backward();
  EXPECT_EQ(info.iterations, info2.iterations);
  EXPECT_LT((x - x2).abs().max().item<double>(), 1e-12 * x2.abs().max().item<double>());
  EXPECT_LT((b.grad() - b2.grad()).abs().max().item<double>(), 1e-12 * b2.grad().abs().max().item<double>() + 1e-300);
  EXPECT_LT((values.grad() - values2.grad()).abs().max().item<double>(),
            1e-10 * values2.grad().abs().max().item<double>() + 1e-300);
}

}  // namespace
}  // namespace tessera::sla
