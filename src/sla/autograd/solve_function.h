#pragma once
// Entry point of the differentiable solve (normalised operands: values [B, nnz], b [Bb, n, k]).

#include <ATen/core/Tensor.h>

#include <memory>

#include "sla/batch_solver.h"

namespace tessera::sla::detail {

/// x [B, n, k] = A^{-1} b, recording one autograd node whose backward solves A^T λ = g with
/// the same `solver`. `info` receives the forward outcome.
at::Tensor solve_autograd(const at::Tensor& values, const at::Tensor& b, const std::shared_ptr<BatchSolver>& solver,
                          SolveInfo& info);

}  // namespace tessera::sla::detail
