#pragma once
// Matrix-free operators for the solve_operator tests: diffusion2d(κ)'s finite-volume
// operator applied from κ without assembling it, and an upwind convection term that makes
// it non-symmetric (with its transpose written out).

#include <ATen/ATen.h>

#include <cmath>

namespace tessera::sla::testing {

/// y = A(κ) x for x [n*n] (x fastest): (A x)_i = (1/h²) Σ_faces T_f (x_i - x_neighbour),
/// T_f the harmonic mean of the two cells' κ, 2 κ_i on a boundary face (as diffusion2d).
inline at::Tensor diffusion_apply(const at::Tensor& x, const at::Tensor& kappa) {
  const int64_t n = kappa.size(0);
  const double inv_h2 = static_cast<double>(n * n);
  at::Tensor u = x.reshape({n, n});
  at::Tensor kx = 2 * kappa.narrow(1, 0, n - 1) * kappa.narrow(1, 1, n - 1) /
                  (kappa.narrow(1, 0, n - 1) + kappa.narrow(1, 1, n - 1));   // faces (r, c|c+1)
  at::Tensor ky = 2 * kappa.narrow(0, 0, n - 1) * kappa.narrow(0, 1, n - 1) /
                  (kappa.narrow(0, 0, n - 1) + kappa.narrow(0, 1, n - 1));   // faces (r|r+1, c)
  at::Tensor fx = kx * (u.narrow(1, 0, n - 1) - u.narrow(1, 1, n - 1));       // T_f (u_west-cell - u_east-cell)
  at::Tensor fy = ky * (u.narrow(0, 0, n - 1) - u.narrow(0, 1, n - 1));
  at::Tensor idx = at::arange(n, kappa.options());
  at::Tensor edge = (idx == 0).to(kappa.scalar_type()) + (idx == n - 1).to(kappa.scalar_type());
  at::Tensor boundary = edge.view({1, n}) + edge.view({n, 1});               // boundary faces per cell
  at::Tensor y = at::constant_pad_nd(fx, {0, 1}) - at::constant_pad_nd(fx, {1, 0}) +
                 at::constant_pad_nd(fy, {0, 0, 0, 1}) - at::constant_pad_nd(fy, {0, 0, 1, 0}) +
                 2 * kappa * boundary * u;
  return (inv_h2 * y).reshape({n * n});
}

/// y = v (D x), (D x)_(r,c) = (x_(r,c) - x_(r,c-1)) / h with x = 0 left of the grid: upwind
/// convection to the east at speed v (a scalar tensor).
inline at::Tensor upwind_apply(const at::Tensor& x, const at::Tensor& v, int64_t n) {
  at::Tensor u = x.reshape({n, n});
  at::Tensor west = at::constant_pad_nd(u.narrow(1, 0, n - 1), {1, 0});
  return (v * static_cast<double>(n) * (u - west)).reshape({n * n});
}

/// y = v (D^T x): (D^T x)_(r,c) = (x_(r,c) - x_(r,c+1)) / h with x = 0 right of the grid.
inline at::Tensor upwind_apply_transposed(const at::Tensor& x, const at::Tensor& v, int64_t n) {
  at::Tensor u = x.reshape({n, n});
  at::Tensor east = at::constant_pad_nd(u.narrow(1, 1, n - 1), {0, 1});
  return (v * static_cast<double>(n) * (u - east)).reshape({n * n});
}

/// A smooth positive field spanning two orders of magnitude (so Jacobi matters), float64.
inline at::Tensor varied_kappa(int64_t n) {
  at::Tensor r = at::arange(n, at::kDouble).view({n, 1}) / n, c = at::arange(n, at::kDouble).view({1, n}) / n;
  return at::pow(10.0, at::sin(6.0 * r) * at::cos(4.0 * c));
}

/// A deterministic right-hand side of m entries.
inline at::Tensor smooth_rhs(int64_t m) { return 1.0 + at::sin(at::arange(m, at::kDouble) * 0.37); }

}  // namespace tessera::sla::testing
