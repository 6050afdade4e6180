// Block thick-restart Lanczos (block Krylov-Schur) on ATen ops: see lanczos.h.

#include "sla/eigsh/lanczos.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <limits>

#include "tessera/core/error.h"

namespace tessera::sla::detail {
namespace {

/// The ranking key: the wanted Ritz values have the largest score.
at::Tensor score(const at::Tensor& theta, RitzOrder order) {
  switch (order) {
    case RitzOrder::LargestAlgebraic: return theta;
    case RitzOrder::SmallestAlgebraic: return -theta;
    case RitzOrder::LargestMagnitude: return theta.abs();
  }
  return theta;
}

/// W <- (I - Q^T Q) W twice (classical Gram-Schmidt with one reorthogonalisation);
/// returns H = Q W_in, the coefficients removed.   Q [j, n] orthonormal rows, W [n, b].
at::Tensor project_out(const LanczosSpace& s, const at::Tensor& q, at::Tensor& w) {
  at::Tensor h = s.inner(q, w);     // H = Q W
  w -= at::mm(q.t(), h);            // W = W - Q^T H
  at::Tensor h2 = s.inner(q, w);    // second pass: what rounding left
  w -= at::mm(q.t(), h2);
  return h + h2;
}

/// Orthonormal basis of W's columns that is orthogonal to Q, and R with W ≈ Q_new R.
/// A (near) rank-deficient W (an invariant subspace was found) still yields orthonormal
/// new directions, from the rounding noise re-orthogonalised against Q.
std::pair<at::Tensor, at::Tensor> next_block(const LanczosSpace& s, const at::Tensor& q, const at::Tensor& w) {
  auto [qn, rn] = s.qr(w);                              // W = Qn Rn
  at::Tensor qn2 = qn.clone();
  project_out(s, q, qn2);                               // keep Qn ⟂ Q when W was tiny
  auto [qn3, r2] = s.qr(qn2);                           // Qn2 = Qn3 R2
  return {qn3, at::mm(r2, rn)};                         // W ≈ Qn3 (R2 Rn)
}

}  // namespace

EigshResult failed_eigsh(int64_t rows, int64_t k, const at::TensorOptions& options, EigshInfo info) {
  EigshResult r;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  r.eigenvalues = at::full({k}, nan, options.requires_grad(false));
  r.eigenvectors = at::full({rows, k}, nan, options.requires_grad(false));
  info.residuals = at::full({k}, nan, at::kDouble);
  info.max_residual = std::numeric_limits<double>::infinity();
  r.info = std::move(info);
  return r;
}

LanczosParams lanczos_params(const EigshOptions& o, int64_t n, bool single_vector) {
  LanczosParams p;
  p.k = o.k;
  p.block = single_vector ? 1 : (o.block_size > 0 ? o.block_size : std::min<int64_t>(o.k, 3));
  int64_t m = o.ncv > 0 ? o.ncv : std::max<int64_t>(2 * o.k + 2 * p.block, 20);
  m = std::max(m, o.k + 2 * p.block);
  m = (m + p.block - 1) / p.block * p.block;
  p.ncv = single_vector ? std::min(m, n) : m;
  p.maxiter = o.maxiter;
  p.tol = o.tol;
  p.seed = o.seed;
  p.order = o.which == Which::Largest    ? RitzOrder::LargestAlgebraic
            : o.which == Which::Smallest ? RitzOrder::SmallestAlgebraic
                                         : RitzOrder::LargestMagnitude;
  return p;
}

LanczosSpace LanczosSpace::whole(int64_t n) {
  LanczosSpace s;
  s.local_rows = n;
  s.inner = [](const at::Tensor& q, const at::Tensor& w) { return at::mm(q, w); };
  s.qr = [](const at::Tensor& w) {
    auto [q, r] = at::linalg_qr(w, "reduced");
    return std::make_pair(q, r);
  };
  s.local = [](const at::Tensor& full) { return full; };
  return s;
}

RitzPairs block_lanczos(const BlockOperator& op, int64_t n, const LanczosParams& p, const LanczosSpace* space) {
  const LanczosSpace whole = space ? LanczosSpace{} : LanczosSpace::whole(n);
  const LanczosSpace& s = space ? *space : whole;
  const int64_t rows = s.local_rows;
  const int64_t b = p.block, m = p.ncv, k = p.k;
  TESSERA_CHECK(b >= 1 && m % b == 0 && m >= k + b && m + b <= n, InvalidInput, "block_lanczos: need block >= 1, ",
                "ncv a multiple of block, ncv >= k + block and ncv + block <= n (k ", k, ", ncv ", m, ", block ", b,
                ", n ", n, ")");
  const auto opts = at::TensorOptions().dtype(at::kDouble);
  at::Tensor q = at::zeros({m + b, rows}, opts);   // basis rows Q_0 .. Q_{m-1}, residual block after
  at::Tensor t = at::zeros({m, m}, opts);       // T = Q op Q^T
  at::Generator gen = at::detail::createCPUGenerator(p.seed);
  at::Tensor start = at::randn({n, b}, gen, opts);
  q.narrow(0, 0, b).copy_(s.qr(s.local(start)).first.t());
  // keep p0 Ritz vectors at a restart: at least k, and m - p0 a multiple of b
  const int64_t q_blocks = std::max<int64_t>(1, (m - k) / (2 * b));
  const int64_t keep = m - q_blocks * b;
  RitzPairs out;
  at::Tensor r_last, theta, y;
  double anorm = 0.0;
  int64_t start_row = 0;
  for (int64_t restart = 0;; ++restart) {
    for (int64_t j = start_row; j < m; j += b) {
      at::Tensor w = op(q.narrow(0, j, b).t().contiguous());    // W = op(Q_j^T)
      out.applications += b;
      at::Tensor qj = q.narrow(0, 0, j + b);
      at::Tensor h = project_out(s, qj, w);                         // H = Q W, W ⟂ Q
      t.narrow(0, 0, j + b).narrow(1, j, b).copy_(h);            // T(:j+b, j:j+b) = H
      t.narrow(0, j, b).narrow(1, 0, j + b).copy_(h.t());        // symmetric
      auto [qn, rn] = next_block(s, qj, w);                         // W = Q_{j+1}^T R
      q.narrow(0, j + b, b).copy_(qn.t());
      if (j + b < m) {
        t.narrow(0, j + b, b).narrow(1, j, b).copy_(rn);         // T(j+b, j) = R (block tridiagonal part)
        t.narrow(0, j, b).narrow(1, j + b, b).copy_(rn.t());
      } else {
        r_last = rn;                                             // op Q^T = Q^T T + Q_m^T R E_m^T
      }
    }
    auto [evals, evecs] = at::linalg_eigh((t + t.t()) * 0.5);   // Rayleigh-Ritz: T y = θ y
    at::Tensor order = std::get<1>(score(evals, p.order).sort(0, /*descending=*/true));
    theta = evals.index_select(0, order);
    y = evecs.index_select(1, order);
    anorm = std::max(anorm, theta.abs().max().item<double>());
    // ||op v - θ v|| = ||R Y(m-b:m, i)|| for v = Q^T y_i
    at::Tensor res = at::mm(r_last, y.narrow(0, m - b, b)).norm(2, {0});
    out.iterations = restart + 1;
    const double worst = res.narrow(0, 0, k).max().item<double>();
    if (worst <= p.tol * std::max(anorm, 1e-300)) {
      out.converged = true;
      break;
    }
    if (restart + 1 >= p.maxiter) {
      out.message = "Lanczos: worst Ritz residual " + std::to_string(worst) + " after " +
                    std::to_string(restart + 1) + " restarts";
      break;
    }
    // thick restart: Q_0..Q_{keep-1} = best Ritz vectors, then the residual block
    at::Tensor kept = at::mm(y.narrow(1, 0, keep).t(), q.narrow(0, 0, m));   // [keep, rows]
    at::Tensor resid = q.narrow(0, m, b).clone();
    q.zero_();
    q.narrow(0, 0, keep).copy_(kept);
    q.narrow(0, keep, b).copy_(resid);
    t.zero_();
    t.narrow(0, 0, keep).narrow(1, 0, keep).copy_(at::diag(theta.narrow(0, 0, keep)));   // T = diag(θ)
    start_row = keep;
  }
  out.theta = theta.narrow(0, 0, k).clone();
  out.vectors = at::mm(q.narrow(0, 0, m).t(), y.narrow(1, 0, k));   // V = Q^T Y
  return out;
}

}  // namespace tessera::sla::detail
