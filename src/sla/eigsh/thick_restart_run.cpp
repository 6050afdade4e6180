// One run of single-vector thick-restart Lanczos (Wu and Simon) on raw arrays, deflated by
// locked vectors: see thick_restart.h.

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

#include "sla/eigsh/basis_kernels.h"
#include "sla/eigsh/thick_restart.h"
#include "tessera/core/error.h"
#include "tessera/core/threads.h"

namespace tessera::sla::detail {
namespace {

/// w <- w - V V^T w over the first j columns of v (classical Gram-Schmidt, repeated while the
/// norm drops below 1/sqrt(2) of its value before the pass: DGKS); h += the coefficients.
/// `before` is ||w|| on entry; returns ||w|| after.
double orthogonalise(const double* v, int64_t n, int64_t j, double* w, double* h, std::vector<double>& tmp,
                     double before) {
  for (int pass = 0; pass < 3; ++pass) {
    basis_inner(v, n, j, w, tmp.data());     // c = V^T w
    basis_subtract(v, n, j, tmp.data(), w);  // w = w - V c
    for (int64_t i = 0; i < j; ++i) h[i] += tmp[i];
    const double after = vector_norm(w, n);
    if (after > 0.7071 * before) return after;
    before = after;
  }
  return before;
}

/// w = a random unit vector ⟂ the first j columns of v.
void random_orthogonal(at::Generator& gen, const double* v, int64_t n, int64_t j, double* w,
                       std::vector<double>& h, std::vector<double>& tmp) {
  at::Tensor r = at::randn({n}, gen, at::kDouble).contiguous();
  std::copy(r.data_ptr<double>(), r.data_ptr<double>() + n, w);
  std::fill(h.begin(), h.end(), 0.0);
  orthogonalise(v, n, j, w, h.data(), tmp, vector_norm(w, n));
  vector_scale(w, n, 1.0 / vector_norm(w, n));
}

}  // namespace

double ritz_score(double theta, RitzOrder order) {
  switch (order) {
    case RitzOrder::LargestAlgebraic: return theta;
    case RitzOrder::SmallestAlgebraic: return -theta;
    case RitzOrder::LargestMagnitude: return std::abs(theta);
  }
  return theta;
}

bool ritz_converged(double theta, double resid, double tol) {
  static const double eps23 = std::pow(std::numeric_limits<double>::epsilon(), 2.0 / 3.0);
  return resid <= tol * std::max(eps23, std::abs(theta));
}

RunResult thick_restart_run(const VectorOperator& op, LockedBasis& basis, const LanczosParams& p,
                            at::Generator& gen, const StopRule& stop) {
  const int64_t n = basis.n, l = basis.locked, m = p.ncv, k = p.k;
  TESSERA_CHECK(k >= 1 && k < m && m < n - l, InvalidInput, "lanczos: need 1 <= k < ncv < n - locked (k ", k,
                ", ncv ", m, ", n ", n, ", locked ", l, ")");
  basis.v.resize(static_cast<size_t>(n) * (l + m + 1));
  basis.scratch.resize(static_cast<size_t>(n) * m);
  double* const v0 = basis.v.data();   // the locked columns L, then the Krylov basis V [n, m + 1]
  double* const v = v0 + l * n;
  std::vector<double> t(static_cast<size_t>(m) * m, 0.0);   // T = V^T op V [m, m]
  std::vector<double> h(l + m + 1), tmp(l + m + 1);        // coefficients against [L, V]
  random_orthogonal(gen, v0, n, l, v, h, tmp);              // v_0 ⟂ L
  const double eps = std::numeric_limits<double>::epsilon();
  RunResult out;
  std::vector<double> theta(m), resid(k);
  std::vector<int64_t> order(m);
  at::Tensor y;   // Ritz vectors of T [m, m], column i for theta[i]
  int64_t kept = 0;
  double beta = 0.0, anorm = 0.0;
  for (int64_t restart = 0;; ++restart) {
    for (int64_t j = kept; j < m; ++j) {
      double* w = v + (j + 1) * n;
      const double* vj = v + j * n;
      op(vj, w);                                                        // w = op v_j
      ++out.applications;
      std::fill(h.begin(), h.end(), 0.0);
      double* hv = h.data() + l;                                        // coefficients against V
      double norm = 0.0;
      if (j > kept) {
        // three-term step: w -= β v_{j-1}, α = <v_j, w>, w -= α v_j; then one
        // reorthogonalisation pass against all of [L, V] (more only if it cancels)
        hv[j - 1] = beta;
        hv[j] = axpy_dot(w, vj - n, beta, vj, n);
        norm = axpy_norm(w, vj, hv[j], n);
      } else {
        norm = vector_norm(w, n);                                       // after a restart: the arrow column
      }
      beta = orthogonalise(v0, n, l + j + 1, w, h.data(), tmp, norm);   // w ⟂ L, v_0..v_j; hv = V^T op v_j
      for (int64_t i = 0; i <= j; ++i) t[i * m + j] = t[j * m + i] = hv[i];
      anorm = std::max(anorm, std::abs(hv[j]));
      if (beta <= eps * std::max(anorm, 1.0) * std::sqrt(static_cast<double>(n))) {
        // invariant subspace: continue from a random direction ⟂ [L, V] (its coupling is 0)
        random_orthogonal(gen, v0, n, l + j + 1, w, h, tmp);
        beta = 0.0;
      } else {
        vector_scale(w, n, 1.0 / beta);                                 // v_{j+1} = w / β
      }
    }
    // Rayleigh-Ritz: T y = θ y; the residual of the Ritz pair (θ, V y) is β |y_{m-1}|
    at::Tensor tt = at::from_blob(t.data(), {m, m}, at::kDouble);
    at::Tensor evals, evecs;
    {
      core::ScopedBlasThreads one(1);   // a small dense problem: no thread team to wake
      std::tie(evals, evecs) = at::linalg_eigh(tt);
    }
    const double* ev = evals.data_ptr<double>();
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return ritz_score(ev[a], p.order) > ritz_score(ev[b], p.order);
    });
    at::Tensor idx = at::from_blob(order.data(), {m}, at::kLong).clone();
    y = evecs.index_select(1, idx).contiguous();
    const double* yp = y.data_ptr<double>();
    for (int64_t i = 0; i < m; ++i) {
      theta[i] = ev[order[i]];
      anorm = std::max(anorm, std::abs(theta[i]));
    }
    int64_t nconv = 0;
    for (int64_t i = 0; i < k; ++i) {
      resid[i] = beta * std::abs(yp[(m - 1) * m + i]);                 // ||op V y_i - θ_i V y_i||
      if (ritz_converged(theta[i], resid[i], p.tol)) ++nconv;
    }
    out.restarts = restart + 1;
    out.theta.assign(theta.begin(), theta.begin() + k);
    out.resid = resid;
    if (stop(out.theta, out.resid)) {
      out.stopped = true;
      break;
    }
    if (restart + 1 >= p.maxiter || (p.max_applications > 0 && out.applications >= p.max_applications)) return out;
    // thick restart: keep the best `kept` Ritz vectors (k plus up to half the rest, more as
    // pairs converge: ARPACK's rule) and the residual direction v_m
    kept = std::min(m - 1, k + std::min(nconv, (m - k) / 2));
    if (kept == 1 && m >= 6) kept = m / 2;
    basis_combine(v, n, m, yp, m, kept, basis.scratch.data());                    // U = V Y[:, :kept]
    std::copy(v + m * n, v + (m + 1) * n, v + kept * n);                           // v_kept = v_m
    std::copy(basis.scratch.begin(), basis.scratch.begin() + kept * n, v);
    std::fill(t.begin(), t.end(), 0.0);
    for (int64_t i = 0; i < kept; ++i) t[i * m + i] = theta[i];                   // T = diag(θ)
  }
  basis_combine(v, n, m, y.data_ptr<double>(), m, k, basis.scratch.data());        // the k wanted V y_i
  std::copy(basis.scratch.begin(), basis.scratch.begin() + k * n, v);
  return out;
}

}  // namespace tessera::sla::detail
