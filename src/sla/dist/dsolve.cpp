// Distributed solve and its adjoint (autograd node with one transposed solve that reuses the
// forward solve's set-up: the Krylov preconditioner, or MUMPS's LU factors).

#include "tessera/sla/dist/dsolve.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <string>

#include "sla/backends/native/krylov.h"
#include "sla/dist/autograd/halo_exchange.h"
#include "sla/dist/dist_preconditioner.h"
#include "sla/dist/distributed_space.h"
#include "sla/dist/dsolve_dispatch.h"
#include "tessera/core/error.h"
#include "tessera/sla/solve.h"
#include "sla/backends/mumps/dist_mumps.h"

namespace tessera::sla {
namespace {

using torch::autograd::Node;
using torch::autograd::variable_list;

// Solves A x = b (or A^T x = b) column by column with the set-up preconditioner `pc` (null
// for none and Jacobi); info is the worst over the columns.
at::Tensor solve_columns(const DSparseTensor& a, const at::Tensor& b, const SolveOptions& options,
                         detail::DistPreconditioner* pc, bool transpose, SolveInfo& info) {
  at::NoGradGuard no_grad;  // the products below record no graph
  const DSparseTensor& plain = a;
  detail::LinearOperator op = [&plain, transpose](const at::Tensor& v) {
    return transpose ? plain.rmatvec(v) : plain.matvec(v);
  };
  at::Tensor diagonal = plain.diagonal();
  const detail::KrylovSpace space = detail::distributed_krylov_space(a);
  const detail::LinearOperator* set_up = pc ? pc->op(transpose) : nullptr;
  at::Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  std::vector<at::Tensor> columns;
  info = SolveInfo{};
  for (int64_t j = 0; j < b2.size(1); ++j) {
    SolveInfo column_info;
    columns.push_back(detail::krylov_solve(op, diagonal, b2.select(1, j).contiguous(), options,
                                           column_info, &space, set_up));
    if (j == 0 || column_info.status != SolveStatus::Converged) {
      SolveStatus keep = info.status;
      info = column_info;
      if (j > 0 && keep != SolveStatus::Converged) info.status = keep;
    }
    info.iterations = std::max(info.iterations, column_info.iterations);
    info.residual = std::max(info.residual, column_info.residual);
  }
  info.backend = to_string(Backend::Native);
  at::Tensor x = at::stack(columns, 1);
  return b.dim() == 1 ? x.squeeze(1) : x;
}

// The solve that the backward node repeats on A^T: λ = A^{-T} g, with its SolveInfo.
using TransposedSolve = std::function<at::Tensor(const at::Tensor& g, SolveInfo& info)>;

// ||A x - b|| / ||b|| over the global vectors (the worst column), the same on every rank.
double relative_residual(const DSparseTensor& a, const at::Tensor& x, const at::Tensor& b, bool transpose) {
  at::NoGradGuard no_grad;
  at::Tensor x2 = x.dim() == 1 ? x.unsqueeze(1) : x, b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  at::Tensor sums = at::zeros({2, b2.size(1)}, at::kDouble);
  for (int64_t j = 0; j < b2.size(1); ++j) {
    at::Tensor xj = x2.select(1, j).contiguous();
    at::Tensor r = (transpose ? a.rmatvec(xj) : a.matvec(xj)) - b2.select(1, j);  // r = A x - b
    sums[0][j] = r.to(at::kDouble).pow(2).sum();
    sums[1][j] = b2.select(1, j).to(at::kDouble).pow(2).sum();
  }
  a.comm()->all_reduce(sums, dist::ReduceOp::Sum);
  return (sums[0].sqrt() / sums[1].sqrt().clamp_min(1e-300)).max().item<double>();
}

// Backward of x = A^{-1} b: λ = A^{-T} g;  db = λ;  dA_ij = -λ_i x_j on the pattern. The
// forward solve's set-up (preconditioner or factors) is reused by `transposed_solve`.
class DSolveBackward final : public Node {
 public:
  DSolveBackward(DSparseTensor a, at::Tensor x, TransposedSolve transposed_solve)
      : a_(std::move(a)), x_(std::move(x)), transposed_solve_(std::move(transposed_solve)) {}
  std::string name() const override { return "tessera::DSolveBackward"; }

  variable_list apply(variable_list&& grads) override {
    at::Tensor g = grads[0].defined() ? grads[0] : at::zeros_like(x_);
    SolveInfo info;
    at::Tensor lambda = transposed_solve_(g, info);
    TESSERA_CHECK(info.status == SolveStatus::Converged, InvalidInput,
                  "adjoint distributed solve did not converge (", to_string(info.status), ", residual ",
                  info.residual, ")");
    at::Tensor grad_values;
    if (should_compute_output(0)) {
      at::NoGradGuard no_grad;
      const HaloPlan& plan = a_.plan();
      // x on owned and halo columns
      at::Tensor x_ext = at::cat({x_, detail::halo_forward_raw(*a_.comm(), plan, x_)}, 0);
      at::Tensor li = lambda.index_select(0, a_.local_rows_index());
      at::Tensor xj = x_ext.index_select(0, a_.local_cols_index());
      grad_values = li.dim() == 1 ? -(li * xj) : -(li * xj).sum(1);  // -λ_i x_j (summed over columns)
    }
    return {grad_values, should_compute_output(1) ? lambda : at::Tensor()};
  }

 private:
  DSparseTensor a_;
  at::Tensor x_;
  TransposedSolve transposed_solve_;
};

// Attaches the backward node to x when A's values or b need gradients.
void record_solve(const DSparseTensor& a, const at::Tensor& b, at::Tensor& x, TransposedSolve transposed_solve) {
  const at::Tensor& values = a.values();
  if (!values.requires_grad() && !b.requires_grad()) return;
  // the node keeps a detached alias of x: holding x itself would make a reference cycle
  std::shared_ptr<DSolveBackward> node(new DSolveBackward(a, x.detach(), std::move(transposed_solve)),
                                       torch::autograd::deleteNode);
  node->set_next_edges(torch::autograd::collect_next_edges(values, b));
  torch::autograd::set_history(x, node);
}

// Solves with A or A^T from MUMPS's LU of the distributed A (factorised here, collective;
// NotCompiled without MUMPS); the factors live as long as the returned function.
using FactorSolve = std::function<at::Tensor(const at::Tensor& rhs, bool transpose, SolveInfo& info)>;
FactorSolve mumps_solver(const DSparseTensor& a) {
  std::shared_ptr<detail::DistDirectFactorization> lu = detail::factorize_distributed_mumps(a);  // collective
  return [a, lu](const at::Tensor& rhs, bool transpose, SolveInfo& info) {
    at::NoGradGuard no_grad;
    at::Tensor x = lu->solve(rhs, transpose);  // A x = rhs (or A^T x = rhs) from the same factors
    info = SolveInfo{};
    info.status = SolveStatus::Converged;
    info.backend = to_string(Backend::Mumps);
    info.method = Method::LU;
    info.residual = relative_residual(a, x, rhs, transpose);
    return x;
  };
}

// Checks b and the backend; returns the options of the native Krylov path (method Auto
// resolved to CG) — unused when the backend is MUMPS.
SolveOptions checked_options(const DSparseTensor& a, const at::Tensor& b, const SolveOptions& options) {
  TESSERA_CHECK(options.backend == Backend::Auto || options.backend == Backend::Native ||
                    options.backend == Backend::Mumps,
                Unsupported, "distributed solves use the native Krylov methods or MUMPS; backend '",
                to_string(options.backend), "' is not available across ranks");
  TESSERA_CHECK(b.defined() && (b.dim() == 1 || b.dim() == 2) && b.size(0) == a.owned_rows(),
                DimensionMismatch, "dsolve: b must be [", a.owned_rows(), "] or [", a.owned_rows(),
                ", k] on rank ", a.comm()->rank());
  TESSERA_CHECK(b.scalar_type() == a.values().scalar_type(), InvalidInput, "dsolve: b has dtype ",
                b.scalar_type(), " but A has ", a.values().scalar_type());
  SolveOptions resolved = options;
  if (options.backend == Backend::Mumps) {
    TESSERA_CHECK(options.method == Method::Auto || options.method == Method::LU, Unsupported,
                  "backend 'mumps' factorises with LU; method ", to_string(options.method), " is not available with it");
    return resolved;
  }
  resolved.backend = Backend::Native;
  if (resolved.method == Method::Auto) resolved.method = Method::CG;
  TESSERA_CHECK(resolved.method == Method::CG || resolved.method == Method::BiCGStab ||
                    resolved.method == Method::GMRES || resolved.method == Method::MINRES,
                Unsupported, "distributed solve: method ", to_string(resolved.method),
                " is not a Krylov method (use cg, bicgstab, gmres or minres)");
  return resolved;
}

}  // namespace

std::pair<at::Tensor, SolveInfo> dsolve(const DSparseTensor& a, const at::Tensor& b, const SolveOptions& requested) {
  const SolveOptions options = detail::choose_distributed_solver(a, requested);  // backend auto resolved, collective
  const SolveOptions resolved = checked_options(a, b, options);
  if (options.backend == Backend::Mumps) {
    FactorSolve solve_with = mumps_solver(a);
    SolveInfo info;
    at::Tensor x = solve_with(b.detach(), /*transpose=*/false, info);
    record_solve(a, b, x, [solve_with](const at::Tensor& g, SolveInfo& adjoint_info) {
      return solve_with(g, /*transpose=*/true, adjoint_info);   // the adjoint reuses the factors
    });
    return {x, info};
  }
  std::shared_ptr<detail::DistPreconditioner> pc = detail::DistPreconditioner::build(a, resolved);  // collective
  SolveInfo info;
  at::Tensor x = solve_columns(a, b.detach(), resolved, pc.get(), /*transpose=*/false, info);
  record_solve(a, b, x, [a, resolved, pc](const at::Tensor& g, SolveInfo& adjoint_info) {
    return solve_columns(a, g, resolved, pc.get(), /*transpose=*/true, adjoint_info);
  });
  return {x, info};
}

std::pair<at::Tensor, SolveInfo> dsolve_transposed(const DSparseTensor& a, const at::Tensor& b,
                                                   const SolveOptions& requested) {
  const SolveOptions options = detail::choose_distributed_solver(a, requested);  // backend auto resolved, collective
  const SolveOptions resolved = checked_options(a, b, options);
  at::NoGradGuard no_grad;
  SolveInfo info;
  if (options.backend == Backend::Mumps) {
    at::Tensor x = mumps_solver(a)(b.detach(), /*transpose=*/true, info);
    return {x, info};
  }
  std::shared_ptr<detail::DistPreconditioner> pc = detail::DistPreconditioner::build(a, resolved);  // collective
  at::Tensor x = solve_columns(a, b.detach(), resolved, pc.get(), /*transpose=*/true, info);
  return {x, info};
}

PreconditionerSetup dsetup_preconditioner(const DSparseTensor& a, const SolveOptions& options) {
  TESSERA_CHECK(options.preconditioner == Preconditioner::BlockJacobi ||
                    options.preconditioner == Preconditioner::BoomerAMG,
                InvalidInput, "dsetup_preconditioner: '", to_string(options.preconditioner),
                "' has no set-up (block-jacobi or boomeramg)");
  a.comm()->barrier();
  const auto start = std::chrono::steady_clock::now();
  auto pc = detail::DistPreconditioner::build(a, options);
  at::Tensor seconds = at::full({1}, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                                at::kDouble);
  a.comm()->all_reduce(seconds, dist::ReduceOp::Max);
  PreconditionerSetup out;
  out.seconds = seconds.item<double>();
  out.summary = std::string(to_string(options.preconditioner)) + " on " + std::to_string(a.comm()->size()) + " ranks";
  return out;
}

}  // namespace tessera::sla
