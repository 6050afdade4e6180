// Distributed Krylov solve and its adjoint (autograd node with one transposed solve).

#include "tessera/sla/dist/dsolve.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <cmath>

#include "sla/backend_lookup.h"
#include "sla/backends/native/krylov.h"
#include "sla/dist/autograd/halo_exchange.h"
#include "tessera/core/error.h"
#include "tessera/sla/backends/direct_backend.h"
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

// Block-Jacobi: M^{-1} r = A_rr^{-1} r (or A_rr^{-T} r) with this rank's diagonal block
// factorised by the preferred Cholesky backend (CHOLMOD, else Eigen) when it looks SPD, by
// the preferred LU backend (UMFPACK, SuperLU, Eigen) otherwise or when Cholesky fails.
detail::LinearOperator block_jacobi(const DSparseTensor& a, bool transpose) {
  const SparseTensor& block = a.interior();
  if (block.rows() == 0) return [](const at::Tensor& r) { return r.clone(); };
  CsrMatrix csr = block.to_csr_matrix();
  std::shared_ptr<Factorization> factor;
  const Backend cholesky = detail::preferred_direct_backend(Method::Cholesky);
  if (cholesky != Backend::Auto && detect_properties(block).spd_candidate()) {
    factor = make_direct_backend(cholesky)->factorize(csr, Method::Cholesky);
  }
  if (!factor || factor->status() != SolveStatus::Converged) {
    const Backend lu = detail::preferred_direct_backend(Method::LU);
    TESSERA_CHECK(lu != Backend::Auto, NotCompiled, "block-Jacobi: no direct LU backend is compiled into this build");
    factor = make_direct_backend(lu)->factorize(csr, Method::LU);
  }
  TESSERA_CHECK(factor->status() == SolveStatus::Converged, InvalidInput, "block-Jacobi: the diagonal block of rank ",
                a.comm()->rank(), " is ", to_string(factor->status()), " (", factor->message(), ")");
  const auto dtype = a.values().scalar_type();
  return [factor, transpose, dtype](const at::Tensor& r) {
    return factor->solve(r.to(at::kDouble), transpose).to(dtype);  // z = A_rr^{-1} r
  };
}

// Solves A x = b (or A^T x = b) column by column; info is the worst over the columns.
at::Tensor solve_columns(const DSparseTensor& a, const at::Tensor& b, const SolveOptions& options,
                         bool transpose, SolveInfo& info) {
  at::NoGradGuard no_grad;  // the products below record no graph
  const DSparseTensor& plain = a;
  detail::LinearOperator op = [&plain, transpose](const at::Tensor& v) {
    return transpose ? plain.rmatvec(v) : plain.matvec(v);
  };
  at::Tensor diagonal = plain.diagonal();
  const detail::KrylovSpace space = distributed_space(a.comm(), a.rows());
  detail::LinearOperator block;
  if (options.preconditioner == Preconditioner::BlockJacobi) block = block_jacobi(plain, transpose);
  at::Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  std::vector<at::Tensor> columns;
  info = SolveInfo{};
  for (int64_t j = 0; j < b2.size(1); ++j) {
    SolveInfo column_info;
    columns.push_back(detail::krylov_solve(op, diagonal, b2.select(1, j).contiguous(), options,
                                           column_info, &space, block ? &block : nullptr));
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

// Backward of x = A^{-1} b: λ = A^{-T} g;  db = λ;  dA_ij = -λ_i x_j on the pattern.
class DSolveBackward final : public Node {
 public:
  DSolveBackward(DSparseTensor a, at::Tensor x, SolveOptions options)
      : a_(std::move(a)), x_(std::move(x)), options_(std::move(options)) {}
  std::string name() const override { return "tessera::DSolveBackward"; }

  variable_list apply(variable_list&& grads) override {
    at::Tensor g = grads[0].defined() ? grads[0] : at::zeros_like(x_);
    SolveInfo info;
    at::Tensor lambda = solve_columns(a_, g, options_, /*transpose=*/true, info);
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
  SolveInfo info;
  at::Tensor x = solve_columns(a, b.detach(), resolved, /*transpose=*/false, info);
  const at::Tensor& values = a.values();
  if (values.requires_grad() || b.requires_grad()) {
    // the node keeps a detached alias of x: holding x itself would make a reference cycle
    std::shared_ptr<DSolveBackward> node(new DSolveBackward(a, x.detach(), resolved), torch::autograd::deleteNode);
    node->set_next_edges(torch::autograd::collect_next_edges(values, b));
    torch::autograd::set_history(x, node);
  }
  return {x, info};
}

}  // namespace tessera::sla
