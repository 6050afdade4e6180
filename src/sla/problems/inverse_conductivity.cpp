// Conductivity recovery by differentiating through solve: Adam on Chebyshev coefficients
// of θ, κ = softplus(θ), misfit = relative H¹ seminorm of u(κ) - u_obs.

#include "tessera/sla/inverse_conductivity.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cmath>

#include "tessera/core/error.h"
#include "tessera/sla/diffusion.h"
#include "tessera/sla/solve.h"

namespace tessera::sla {
namespace {

/// [n, m]: T_k(2 x_i - 1) at the cell centres x_i = (i + 1/2) / n, by the recurrence
/// T_0 = 1, T_1 = t, T_{k+1} = 2 t T_k - T_{k-1}.
at::Tensor chebyshev_basis(int64_t n, int64_t m) {
  at::Tensor t = (at::arange(n, at::kDouble) + 0.5) * (2.0 / static_cast<double>(n)) - 1.0;
  std::vector<at::Tensor> columns{at::ones_like(t), t};
  for (int64_t k = 2; k < m; ++k) columns.push_back(2 * t * columns[k - 1] - columns[k - 2]);
  columns.resize(static_cast<size_t>(m));
  return at::stack(columns, 1);
}

/// κ*(x, y) = 1 + 0.5 sin 2πx sin 2πy at the cell centres, rows indexed by y.
at::Tensor true_conductivity(int64_t n) {
  at::Tensor centre = (at::arange(n, at::kDouble) + 0.5) / static_cast<double>(n);
  at::Tensor s = at::sin(2 * M_PI * centre);
  return 1 + 0.5 * s.view({n, 1}) * s.view({1, n});
}

/// |z|²_{H¹}: sum of squared differences between neighbouring cells of the [n, n] field.
at::Tensor h1_seminorm_squared(const at::Tensor& z) {
  const int64_t n = z.size(0);
  at::Tensor dy = z.narrow(0, 1, n - 1) - z.narrow(0, 0, n - 1);
  at::Tensor dx = z.narrow(1, 1, n - 1) - z.narrow(1, 0, n - 1);
  return dy.pow(2).sum() + dx.pow(2).sum();
}

double relative_error(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).norm().item<double>() / b.norm().item<double>();
}

/// Adam with bias correction on one parameter tensor.
struct Adam {
  at::Tensor m, v;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  int64_t t = 0;
  void step(at::Tensor& param, const at::Tensor& grad, double lr) {
    if (!m.defined()) { m = at::zeros_like(grad); v = at::zeros_like(grad); }
    ++t;
    m.mul_(beta1).add_(grad, 1 - beta1);                 // m = β1 m + (1 - β1) g
    v.mul_(beta2).addcmul_(grad, grad, 1 - beta2);       // v = β2 v + (1 - β2) g²
    const double c1 = 1 - std::pow(beta1, static_cast<double>(t));
    const double c2 = 1 - std::pow(beta2, static_cast<double>(t));
    // θ -= lr m̂ / (sqrt(v̂) + ε),  m̂ = m / c1, v̂ = v / c2
    param.sub_(lr / c1 * m / (at::sqrt(v / c2) + eps));
  }
};

}  // namespace

InverseConductivityResult fit_conductivity(const InverseConductivityOptions& options,
                                           const std::function<void(const InverseConductivityStep&)>& on_step) {
  const int64_t n = options.grid;
  TESSERA_CHECK(n >= 2, InvalidInput, "fit_conductivity: grid must be >= 2, got ", n);
  TESSERA_CHECK(options.basis >= 0 && options.basis <= n, InvalidInput,
                "fit_conductivity: basis must be in [0, grid], got ", options.basis);
  InverseConductivityResult result;
  result.kappa_true = true_conductivity(n);
  const at::Tensor f = at::ones({n * n}, at::kDouble);
  auto [u_obs, obs_info] = solve(diffusion2d(result.kappa_true), f, options.solve);
  TESSERA_CHECK(obs_info.status == SolveStatus::Converged, InvalidInput,
                "fit_conductivity: the data solve failed: ", obs_info.message);
  result.u_obs = u_obs.view({n, n});
  const double obs_h1 = h1_seminorm_squared(result.u_obs).item<double>();

  // θ = B c Bᵀ (Chebyshev) or θ = c (per cell); start from κ ≡ 1: θ = softplus^{-1}(1) = log(e - 1)
  const bool per_cell = options.basis == 0;
  const at::Tensor basis = per_cell ? at::Tensor() : chebyshev_basis(n, options.basis);
  at::Tensor coef = per_cell ? at::full({n, n}, std::log(std::exp(1.0) - 1.0), at::kDouble)
                             : at::zeros({options.basis, options.basis}, at::kDouble);
  if (!per_cell) coef[0][0] = std::log(std::exp(1.0) - 1.0);
  auto kappa_of = [&](const at::Tensor& c) { return at::softplus(per_cell ? c : at::matmul(at::matmul(basis, c), basis.t())); };

  Adam adam;
  const auto start = std::chrono::steady_clock::now();
  result.stop_reason = "max_steps";
  for (int64_t step = 0; step < options.max_steps; ++step) {
    at::Tensor c = coef.detach().requires_grad_();
    at::Tensor kappa = kappa_of(c);
    auto [u, info] = solve(diffusion2d(kappa), f, options.solve);   // u = A(κ)^{-1} 1
    result.solve_info = info;
    if (info.status != SolveStatus::Converged) { result.stop_reason = "solve_failed"; break; }
    at::Tensor misfit = h1_seminorm_squared(u.view({n, n}) - result.u_obs) / obs_h1;
    misfit.backward();                                             // one adjoint solve
    InverseConductivityStep record;
    record.step = step;
    record.misfit = misfit.item<double>();
    record.kappa_error = relative_error(kappa.detach(), result.kappa_true);
    record.u_error = relative_error(u.detach().view({n, n}), result.u_obs);
    record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.steps = step + 1;
    if (step == 0 || record.misfit < result.last.misfit) {   // keep the best iterate by misfit (κ* unknown)
      result.kappa = kappa.detach();
      result.u = u.detach().view({n, n});
      result.last = record;
    }
    if (on_step) on_step(record);
    if (record.misfit < options.misfit_tol) { result.stop_reason = "misfit_tol"; break; }
    if (record.seconds > options.time_limit_seconds) { result.stop_reason = "time_limit"; break; }
    adam.step(coef, c.grad(), options.lr * std::pow(options.lr_decay, static_cast<double>(step)));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace tessera::sla
