// A differentiable sparse solve on the 2D Poisson problem -Δu = f on a 32 x 32 grid:
// solve, then the gradient of J(u) = sum(u) with respect to the right-hand side and the
// matrix values from one adjoint solve, checked against a finite difference.

#include <ATen/ATen.h>

#include <cstdio>

#include "tessera/sla/generators.h"
#include "tessera/sla/solve.h"

int main() {
  using namespace tessera::sla;
  const int64_t n = 32;
  SparseTensor a = poisson2d(n);
  at::Tensor values = a.values().clone().requires_grad_();
  at::Tensor f = at::ones({a.rows()}, at::kDouble).requires_grad_();
  auto [u, info] = solve(a.with_values(values), f);   // backend "auto"
  std::printf("A: 2D Poisson, %lld unknowns, %lld stored entries\n", static_cast<long long>(a.rows()),
              static_cast<long long>(a.nnz()));
  std::printf("solve: backend %s, method %s, status %s, %lld iterations, relative residual %.2e\n",
              info.backend.c_str(), to_string(info.method), to_string(info.status),
              static_cast<long long>(info.iterations), info.residual);
  at::Tensor loss = u.sum();   // J = sum(u)
  loss.backward();             // one adjoint solve A^T λ = 1
  std::printf("J = sum(u) = %.10f\n", loss.item<double>());
  std::printf("dJ/df: norm %.6e (= λ, the adjoint solution); dJ/dA on the pattern: norm %.6e\n",
              f.grad().norm().item<double>(), values.grad().norm().item<double>());
  // finite-difference check of dJ/dA_00: perturb the first stored value (the diagonal entry)
  const double h = 1e-4;   // central difference: O(h^2) truncation, small cancellation
  at::Tensor plus = a.values().clone(), minus = a.values().clone();
  plus[0] += h;
  minus[0] -= h;
  SolveOptions tight;
  tight.rtol = 1e-13;
  const double fd = (solve(a.with_values(plus), f.detach(), tight).first.sum().item<double>() -
                     solve(a.with_values(minus), f.detach(), tight).first.sum().item<double>()) / (2 * h);
  const double ad = values.grad()[0].item<double>();
  std::printf("dJ/dA_00: adjoint %.10e, finite difference %.10e, relative difference %.1e\n", ad, fd,
              std::abs(ad - fd) / std::abs(fd));
  return info.status == SolveStatus::Converged ? 0 : 3;
}
