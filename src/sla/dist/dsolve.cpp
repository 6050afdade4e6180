// Distributed Krylov solve and its adjoint (autograd node with one transposed solve that
// reuses the forward solve's preconditioner set-up).

#include "tessera/sla/dist/dsolve.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <chrono>
#include <cmath>
#include <string>

#include "sla/backends/native/krylov.h"
#include "sla/dist/autograd/halo_exchange.h"
#include "sla/dist/dist_preconditioner.h"
#include "tessera/core/error.h"
#include "tessera/sla/solve.h"

namespace tessera::sla {
namespace {

using torch::autograd::Node;
using torch::autograd::variable_list;

// The Krylov space of distributed vectors: inner products summed over the ranks.
detail::KrylovSpace distributed_space(const std::shared_ptr<dist::Communicator>& comm, int64_t global_rows) {
  detail::KrylovSpace space;
  space.dot = [comm](const at::Tensor& u, const at::Tensor& v) {
    at::Tensor s = at::dot(u, v).to(at::kDouble).reshape({1}).contiguous();  // <u, v>_r
    comm->all_reduce(s, dist::ReduceOp::Sum);                                 // sum_r <u, v>_r
    return s.item<double>();
  };
  space.block_dot = [comm](const at::Tensor& v, const at::Tensor& w) {
    at::Tensor h = at::mv(v, w).contiguous();  // V_r^T w_r
    comm->all_reduce(h, dist::ReduceOp::Sum);
    return h;
  };
  space.any = [comm](bool flag) {
    at::Tensor f = at::full({1}, static_cast<int32_t>(flag), at::kInt);
    comm->all_reduce(f, dist::ReduceOp::Max);
    return f.item<int32_t>() != 0;
  };
  space.global_size = global_rows;
  return space;
}

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
  const detail::KrylovSpace space = distributed_space(a.comm(), a.rows());
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

// Backward of x = A^{-1} b: λ = A^{-T} g;  db = λ;  dA_ij = -λ_i x_j on the pattern. The
// forward solve's preconditioner set-up is reused.
class DSolveBackward final : public Node {
 public:
  DSolveBackward(DSparseTensor a, at::Tensor x, SolveOptions options, std::shared_ptr<detail::DistPreconditioner> pc)
      : a_(std::move(a)), x_(std::move(x)), options_(std::move(options)), pc_(std::move(pc)) {}
  std::string name() const override { return "tessera::DSolveBackward"; }

  variable_list apply(variable_list&& grads) override {
    at::Tensor g = grads[0].defined() ? grads[0] : at::zeros_like(x_);
    SolveInfo info;
    at::Tensor lambda = solve_columns(a_, g, options_, pc_.get(), /*transpose=*/true, info);
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
  SolveOptions options_;
  std::shared_ptr<detail::DistPreconditioner> pc_;
};

}  // namespace

std::pair<at::Tensor, SolveInfo> dsolve(const DSparseTensor& a, const at::Tensor& b, const SolveOptions& options) {
  TESSERA_CHECK(options.backend == Backend::Auto || options.backend == Backend::Native, Unsupported,
                "distributed solves use the native Krylov methods; backend '", to_string(options.backend),
                "' is not available across ranks");
  TESSERA_CHECK(b.defined() && (b.dim() == 1 || b.dim() == 2) && b.size(0) == a.owned_rows(),
                DimensionMismatch, "dsolve: b must be [", a.owned_rows(), "] or [", a.owned_rows(),
                ", k] on rank ", a.comm()->rank());
  TESSERA_CHECK(b.scalar_type() == a.values().scalar_type(), InvalidInput, "dsolve: b has dtype ",
                b.scalar_type(), " but A has ", a.values().scalar_type());
  SolveOptions resolved = options;
  resolved.backend = Backend::Native;
  if (resolved.method == Method::Auto) resolved.method = Method::CG;
  TESSERA_CHECK(resolved.method == Method::CG || resolved.method == Method::BiCGStab ||
                    resolved.method == Method::GMRES || resolved.method == Method::MINRES,
                Unsupported, "distributed solve: method ", to_string(resolved.method),
                " is not a Krylov method (use cg, bicgstab, gmres or minres)");
  std::shared_ptr<detail::DistPreconditioner> pc = detail::DistPreconditioner::build(a, resolved);  // collective
  SolveInfo info;
  at::Tensor x = solve_columns(a, b.detach(), resolved, pc.get(), /*transpose=*/false, info);
  const at::Tensor& values = a.values();
  if (values.requires_grad() || b.requires_grad()) {
    // the node keeps a detached alias of x: holding x itself would make a reference cycle
    std::shared_ptr<DSolveBackward> node(new DSolveBackward(a, x.detach(), resolved, pc), torch::autograd::deleteNode);
    node->set_next_edges(torch::autograd::collect_next_edges(values, b));
    torch::autograd::set_history(x, node);
  }
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
