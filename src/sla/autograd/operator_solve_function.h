#pragma once
// Entry point of the differentiable solve with a user linear operator.

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "sla/operator/operator_problem.h"

namespace tessera::sla::detail {

/// x = A(params)^{-1} b, recording one autograd node whose backward solves A^T λ = g with
/// the same `problem` (method and preconditioner hook), then gives dL/db = λ and
/// dL/dθ = -∂/∂θ <λ, A(θ) x>. `info` receives the forward outcome.
at::Tensor operator_solve_autograd(const std::vector<at::Tensor>& params, const at::Tensor& b,
                                   const std::shared_ptr<OperatorProblem>& problem, SolveInfo& info);

}  // namespace tessera::sla::detail
