// The Krylov solves and the parameter vector-Jacobian product of a user linear operator.

#include "sla/operator/operator_problem.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <utility>

#include "tessera/core/error.h"

namespace tessera::sla::detail {

OperatorSolveOptions resolve_operator_options(const UserOperator& op, const at::Tensor& b,
                                              const OperatorSolveOptions& options, const char* name) {
  TESSERA_CHECK(static_cast<bool>(op.apply), InvalidInput, name, ": the operator has no apply function");
  TESSERA_CHECK(op.rows >= 0, InvalidInput, name, ": op.rows must be >= 0, got ", op.rows);
  TESSERA_CHECK(b.defined(), InvalidInput, name, ": b is undefined");
  TESSERA_CHECK((b.dim() == 1 || b.dim() == 2) && b.size(0) == op.rows, DimensionMismatch, name,
                ": the operator has ", op.rows, " rows but b has shape ", b.sizes(), "; expected [", op.rows,
                "] or [", op.rows, ", k]");
  TESSERA_CHECK(b.scalar_type() == at::kDouble || b.scalar_type() == at::kFloat, InvalidInput, name,
                ": b must be float32 or float64, got ", b.scalar_type());
  TESSERA_CHECK(options.rtol >= 0.0 && options.atol >= 0.0 && options.maxiter >= 0 && options.gmres_restart > 0,
                InvalidInput, name, ": need rtol >= 0, atol >= 0, maxiter >= 0 and gmres_restart > 0");
  OperatorSolveOptions resolved = options;
  if (resolved.method == Method::Auto) resolved.method = op.symmetric ? Method::CG : Method::GMRES;
  TESSERA_CHECK(is_krylov(resolved.method), Unsupported, name, ": method '", to_string(resolved.method),
                "' needs a stored matrix; a user operator is solved by cg, bicgstab, gmres or minres");
  return resolved;
}

OperatorProblem::OperatorProblem(UserOperator op, const std::vector<at::Tensor>& params, OperatorSolveOptions options,
                                 KrylovSpace space, const char* name)
    : op_(std::move(op)), options_(std::move(options)), space_(std::move(space)), name_(name) {
  for (size_t i = 0; i < params.size(); ++i) {
    TESSERA_CHECK(params[i].defined(), InvalidInput, name, ": parameter ", i, " is undefined");
    params_.push_back(params[i].detach());
  }
}

namespace {

void check_result(const at::Tensor& y, const at::Tensor& x, const char* name, const char* what) {
  TESSERA_CHECK(y.defined(), InvalidInput, name, ": ", what, " returned an undefined tensor");
  TESSERA_CHECK(y.dim() == 1 && y.size(0) == x.size(0), DimensionMismatch, name, ": ", what, " returned shape ",
                y.sizes(), " for a vector of ", x.size(0), " entries; it must return [", x.size(0), "]");
  TESSERA_CHECK(y.scalar_type() == x.scalar_type(), InvalidInput, name, ": ", what, " returned ", y.scalar_type(),
                " for a ", x.scalar_type(), " vector");
}

}  // namespace

at::Tensor OperatorProblem::apply(const at::Tensor& x, const std::vector<at::Tensor>& params, bool transpose) const {
  if (transpose && !op_.symmetric && !op_.apply_transposed) return transposed_by_vjp(x);
  const bool own_transpose = transpose && !op_.symmetric;
  at::Tensor y = own_transpose ? op_.apply_transposed(x, params) : op_.apply(x, params);   // A x or A^T x
  check_result(y, x, name_, own_transpose ? "apply_transposed" : "apply");
  return y;
}

at::Tensor OperatorProblem::transposed_by_vjp(const at::Tensor& v) const {
  at::AutoGradMode grad_mode(true);
  at::Tensor x = at::zeros_like(v).requires_grad_(true);
  at::Tensor y = op_.apply(x, params_);
  check_result(y, v, name_, "apply");
  TESSERA_CHECK(y.requires_grad(), InvalidInput, name_,
                ": A^T v is taken through apply's autograd, but apply's result does not depend on x with autograd; "
                "give apply_transposed (op_t) or mark the operator symmetric");
  at::Tensor g = torch::autograd::grad({y}, {x}, {v}, /*retain_graph=*/false, /*create_graph=*/false,
                                       /*allow_unused=*/true)[0];   // A^T v = ∂/∂x <v, A x>
  return g.defined() ? g.detach() : at::zeros_like(v);
}

at::Tensor OperatorProblem::precondition(const at::Tensor& r, bool transpose) const {
  const bool own = transpose && options_.preconditioner_transposed;
  at::Tensor z = own ? options_.preconditioner_transposed(r) : options_.preconditioner(r);   // M^{-1} r or M^{-T} r
  check_result(z, r, name_, own ? "preconditioner_transposed" : "preconditioner");
  return z;
}

at::Tensor OperatorProblem::solve(const at::Tensor& b, bool transpose, SolveInfo& info) const {
  at::NoGradGuard no_grad;   // the forward and adjoint solves record no graph
  const bool finite = at::isfinite(b).all().item<bool>();
  TESSERA_CHECK(!space_.any(!finite), InvalidInput, name_, ": ", transpose ? "the adjoint right-hand side" : "b",
                " contains NaN or Inf");
  const LinearOperator a = [this, transpose](const at::Tensor& v) { return apply(v, params_, transpose); };
  const LinearOperator m = [this, transpose](const at::Tensor& r) { return precondition(r, transpose); };
  SolveOptions krylov;
  krylov.backend = Backend::Native;
  krylov.method = options_.method;
  krylov.rtol = options_.rtol;
  krylov.atol = options_.atol;
  krylov.maxiter = options_.maxiter;
  krylov.gmres_restart = options_.gmres_restart;
  krylov.preconditioner = Preconditioner::None;   // the hook, when given, comes as the set-up operator
  const LinearOperator* hook = options_.preconditioner ? &m : nullptr;
  const at::Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  std::vector<at::Tensor> columns;
  info = SolveInfo{};
  info.backend = to_string(Backend::Native);
  info.method = options_.method;
  for (int64_t c = 0; c < b2.size(1); ++c) {
    SolveInfo part;
    columns.push_back(krylov_solve(a, at::Tensor(), b2.select(1, c).contiguous(), krylov, part, &space_, hook));
    info.iterations = std::max(info.iterations, part.iterations);
    info.residual = std::max(info.residual, part.residual);
    if (worse_status(part.status, info.status) != info.status || info.message.empty()) info.message = part.message;
    info.status = worse_status(info.status, part.status);
  }
  if (b.dim() == 1) return columns.front();
  return at::stack(columns, 1);
}

std::vector<at::Tensor> OperatorProblem::params_vjp(const at::Tensor& x, const at::Tensor& lambda,
                                                    const std::vector<bool>& wanted) const {
  std::vector<at::Tensor> out(params_.size());
  std::vector<at::Tensor> args = params_, leaves;
  std::vector<size_t> which;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!wanted[i]) continue;
    args[i] = params_[i].detach().requires_grad_(true);
    leaves.push_back(args[i]);
    which.push_back(i);
  }
  if (leaves.empty()) return out;
  at::AutoGradMode grad_mode(true);
  const at::Tensor x2 = x.dim() == 1 ? x.unsqueeze(1) : x, l2 = lambda.dim() == 1 ? lambda.unsqueeze(1) : lambda;
  std::vector<at::Tensor> ys, cotangents;
  for (int64_t c = 0; c < x2.size(1); ++c) {
    at::Tensor y = apply(x2.select(1, c).detach().contiguous(), args, /*transpose=*/false);   // A(θ) x_c
    if (!y.requires_grad()) continue;   // this column's product does not involve θ
    ys.push_back(y);
    cotangents.push_back(-l2.select(1, c).detach());
  }
  std::vector<at::Tensor> g;
  if (!ys.empty()) {
    g = torch::autograd::grad(ys, leaves, cotangents, /*retain_graph=*/false, /*create_graph=*/false,
                              /*allow_unused=*/true);   // -∂/∂θ <λ, A(θ) x>
  }
  for (size_t k = 0; k < which.size(); ++k) {
    const at::Tensor& p = params_[which[k]];
    out[which[k]] = k < g.size() && g[k].defined() ? g[k] : at::zeros_like(p);
  }
  return out;
}

}  // namespace tessera::sla::detail
