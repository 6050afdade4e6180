#pragma once
// The forward iterations of nonlinear_solve: Newton with backtracking, and the chord
// method with Anderson acceleration.

#include <ATen/core/Tensor.h>

#include "sla/nonlinear/residual_ops.h"

namespace tessera::sla::detail {

/// Newton: J(u) δ = -F(u), u <- u + t δ with t halved until ||F|| decreases by the Armijo
/// factor (1 - 1e-4 t). Returns u; fills info.
at::Tensor newton(ResidualProblem& problem, const at::Tensor& u0, NonlinearInfo& info);

/// Chord iteration g(u) = u - J(u0)^{-1} F(u) with Anderson mixing of depth m:
/// u_{k+1} = g(u_k) - ΔG γ,  γ = argmin ||f_k - ΔF γ||,  f = g(u) - u.
at::Tensor anderson(ResidualProblem& problem, const at::Tensor& u0, NonlinearInfo& info);

}  // namespace tessera::sla::detail
