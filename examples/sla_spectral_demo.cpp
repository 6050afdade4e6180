// Eigenvalues, determinants and nonlinear solves on 2D Poisson problems, each with its
// gradient: eigsh (Lanczos) against the analytic spectrum, logdet with its gradient by
// selected inversion, a Bratu problem solved by Newton with the gradient from one adjoint
// solve, and a SparseTensorList of two meshes.

#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>

#include "tessera/sla/determinant.h"
#include "tessera/sla/eigsh.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/nonlinear_solve.h"
#include "tessera/sla/sparse_tensor_list.h"

using namespace tessera::sla;

namespace {

int eigenvalues(int64_t n) {
  SparseTensor a = poisson2d(n);
  at::Tensor values = a.values().clone().requires_grad_();
  EigshOptions o;
  o.k = 4;
  o.which = Which::Smallest;
  EigshResult r = eigsh(a.with_values(values), o);
  const double c = M_PI / (n + 1);
  const double exact[4] = {4 - 4 * std::cos(c), 4 - 2 * std::cos(c) - 2 * std::cos(2 * c),
                           4 - 2 * std::cos(c) - 2 * std::cos(2 * c), 4 - 4 * std::cos(2 * c)};
  std::printf("eigsh: 4 smallest of 2D Poisson (n = %lld): backend %s, %lld restarts, %lld products, max ||Av - lv|| %.1e\n",
              static_cast<long long>(a.rows()), r.info.backend.c_str(), static_cast<long long>(r.info.iterations),
              static_cast<long long>(r.info.operator_applications), r.info.max_residual);
  for (int i = 0; i < 4; ++i) {
    std::printf("  lambda_%d = %.12f   analytic %.12f\n", i, r.eigenvalues[i].item<double>(), exact[i]);
  }
  r.eigenvalues[0].backward();   // Hellmann-Feynman: d lambda_0 / dA_ij = v_i v_j
  std::printf("  d lambda_0 / dA summed over the pattern: %.12f (= sum_ij v_i v_j over stored entries)\n",
              values.grad().sum().item<double>());
  return r.info.status == SolveStatus::Converged ? 0 : 3;
}

int determinant(int64_t n) {
  SparseTensor a = poisson2d(n);
  at::Tensor values = a.values().clone().requires_grad_();
  auto [ld, info] = logdet(a.with_values(values));
  ld.backward();   // (A^{-T})_ij on the pattern, by selected inversion
  const double h = 1e-5;
  at::Tensor plus = a.values().clone(), minus = a.values().clone();
  plus[0] += h;
  minus[0] -= h;
  const double fd = (logdet(a.with_values(plus)).first.item<double>() - logdet(a.with_values(minus)).first.item<double>()) / (2 * h);
  std::printf("logdet of 2D Poisson (n = %lld) by %s %s: %.10f\n", static_cast<long long>(a.rows()),
              info.backend.c_str(), to_string(info.method), ld.item<double>());
  std::printf("  d logdet / dA_00 = (A^-1)_00: selected inversion %.10e, finite difference %.10e\n",
              values.grad()[0].item<double>(), fd);
  return info.status == SolveStatus::Converged ? 0 : 3;
}

int bratu(int64_t grid) {
  SparseTensor a = poisson2d(grid);
  const double h2 = 1.0 / double((grid + 1) * (grid + 1));
  auto residual = [&](const at::Tensor& u, const std::vector<at::Tensor>& p) {
    return matvec(a, u) - h2 * p[0] * at::exp(u);   // F(u, lambda) = A u - h^2 lambda e^u
  };
  at::Tensor lambda = at::tensor({5.0}, at::kDouble).requires_grad_();
  NonlinearOptions o;
  o.jacobian_pattern = a;   // J = A - h^2 lambda diag(e^u): A's pattern
  auto [u, info] = nonlinear_solve(residual, at::zeros({a.rows()}, at::kDouble), {lambda}, o);
  u.max().backward();       // d max(u) / d lambda from one adjoint solve
  const double dl = 1e-5;
  auto umax = [&](double l) {
    return nonlinear_solve(residual, at::zeros({a.rows()}, at::kDouble), {at::tensor({l}, at::kDouble)}, o)
        .first.max().item<double>();
  };
  std::printf("Bratu -lap u = lambda e^u (lambda = 5, %lld x %lld grid): %s in %lld Newton steps, ||F|| %.1e, %lld colours\n",
              static_cast<long long>(grid), static_cast<long long>(grid), to_string(info.status),
              static_cast<long long>(info.iterations), info.residual, static_cast<long long>(info.colors));
  std::printf("  max u = %.10f; d max u / d lambda: adjoint %.10e, finite difference %.10e\n",
              u.max().item<double>(), lambda.grad().item<double>(), (umax(5.0 + dl) - umax(5.0 - dl)) / (2 * dl));
  return info.status == SolveStatus::Converged ? 0 : 3;
}

int list_of_meshes() {
  SparseTensorList list({poisson2d(10), poisson2d(20)});
  auto [ld, infos] = list.logdet();
  const double whole = slogdet(list.to_block_diagonal()).logabsdet.item<double>();
  std::printf("SparseTensorList of 2D Poisson 10x10 and 20x20: logdet %.8f and %.8f; block-diagonal %.8f (sum %.8f)\n",
              ld[0].item<double>(), ld[1].item<double>(), whole, ld.sum().item<double>());
  return 0;
}

}  // namespace

int main() {
  int rc = eigenvalues(40);
  rc = std::max(rc, determinant(40));
  rc = std::max(rc, bratu(32));
  rc = std::max(rc, list_of_meshes());
  return rc;
}
