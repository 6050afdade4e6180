// Restarted GMRES(m), right-preconditioned (so its residual is the true one), with
// classical Gram-Schmidt applied twice and Givens rotations on the Hessenberg matrix.

#include <ATen/ATen.h>

#include <cmath>
#include <vector>

#include "sla/backends/native/krylov.h"
#include "sla/backends/native/krylov_kernels.h"

namespace tessera::sla::detail {
namespace {

/// Hessenberg least-squares state of one cycle: H (column j holds h(0..j+1, j)), rotations, g.
struct Cycle {
  std::vector<std::vector<double>> h;
  std::vector<double> cs, sn, g;
};

/// Applies the previous rotations to column j, makes a new one that zeroes h(j+1, j).
void rotate_column(Cycle& c, int64_t j) {
  std::vector<double>& col = c.h[j];
  for (int64_t i = 0; i < j; ++i) {
    const double t = c.cs[i] * col[i] + c.sn[i] * col[i + 1];   // [c s; -s c] [h_i; h_i+1]
    col[i + 1] = -c.sn[i] * col[i] + c.cs[i] * col[i + 1];
    col[i] = t;
  }
  const double d = std::hypot(col[j], col[j + 1]);
  c.cs.push_back(d == 0.0 ? 1.0 : col[j] / d);
  c.sn.push_back(d == 0.0 ? 0.0 : col[j + 1] / d);
  col[j] = d;                                   // h(j, j) = sqrt(h_jj^2 + h_j+1,j^2)
  col[j + 1] = 0.0;
  c.g.push_back(-c.sn[j] * c.g[j]);             // g(j+1) = -s g(j)
  c.g[j] = c.cs[j] * c.g[j];                    // g(j) = c g(j); |g(j+1)| = ||r||
}

}  // namespace

KrylovResult run_gmres(const LinearOperator& a, const KrylovPreconditioner& m, const at::Tensor& b, const at::Tensor& x0,
                       const KrylovParams& params) {
  KrylovResult out;
  at::Tensor x = x0.clone();
  const int64_t restart = std::max<int64_t>(1, params.restart);
  while (true) {
    at::Tensor r = b - a(x);                                  // r = b - A x
    const double beta = params.space.norm(r);
    if (!std::isfinite(beta)) { out.status = SolveStatus::Breakdown; out.message = "GMRES: non-finite residual"; break; }
    if (beta <= params.tol) { out.status = SolveStatus::Converged; break; }
    if (out.iterations >= params.maxiter) { out.status = SolveStatus::NotConverged; break; }
    const int64_t m_max = std::min(restart, params.maxiter - out.iterations);
    at::Tensor basis = at::zeros({m_max + 1, b.size(0)}, b.options());   // V, rows v_0..v_m
    basis[0].copy_(r / beta);                                 // v_0 = r / ||r||
    Cycle c;
    c.g.push_back(beta);                                      // g = ||r|| e_1
    int64_t j = 0;
    for (; j < m_max; ++j) {
      at::Tensor w = a(m.apply(basis[j]));                    // w = A M^{-1} v_j
      at::Tensor vj = basis.narrow(0, 0, j + 1);
      at::Tensor h = params.space.block_dot(vj, w);           // h = V^T w
      w = w - at::mv(vj.t(), h);                              // w = w - V h
      at::Tensor h2 = params.space.block_dot(vj, w);          // second pass (CGS2)
      w = w - at::mv(vj.t(), h2);
      h = (h + h2).cpu().to(at::kDouble);
      const double wnorm = params.space.norm(w);                          // h(j+1, j) = ||w||
      c.h.emplace_back(h.data_ptr<double>(), h.data_ptr<double>() + j + 1);
      c.h[j].push_back(wnorm);
      if (wnorm > 0.0) basis[j + 1].copy_(w / wnorm);         // v_{j+1} = w / h(j+1, j)
      rotate_column(c, j);
      ++out.iterations;
      if (std::abs(c.g[j + 1]) <= params.tol || wnorm == 0.0) { ++j; break; }
    }
    // y = R^{-1} g (back substitution on the rotated Hessenberg), x += M^{-1} V y
    std::vector<double> y(j);
    for (int64_t i = j - 1; i >= 0; --i) {
      double s = c.g[i];
      for (int64_t k = i + 1; k < j; ++k) s -= c.h[k][i] * y[k];
      if (c.h[i][i] == 0.0) {
        out.status = SolveStatus::Breakdown;
        out.message = "GMRES: singular Hessenberg matrix (A is singular on the Krylov space)";
        out.x = x;
        return out;
      }
      y[i] = s / c.h[i][i];
    }
    at::Tensor yt = at::tensor(y, at::kDouble).to(b.options());
    x.add_(m.apply(at::mv(basis.narrow(0, 0, j).t(), yt)));   // x = x + M^{-1} V y
  }
  out.x = x;
  return out;
}

}  // namespace tessera::sla::detail
