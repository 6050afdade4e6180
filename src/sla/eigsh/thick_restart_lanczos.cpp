// Single-vector thick-restart Lanczos on raw arrays: see lanczos.h.

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>
#include <vector>

#include "sla/eigsh/basis_kernels.h"
#include "sla/eigsh/lanczos.h"
#include "tessera/core/error.h"
#include "tessera/core/threads.h"

namespace tessera::sla::detail {
namespace {

/// Ranking key: the wanted Ritz values have the largest score.
double score(double theta, RitzOrder order) {
  switch (order) {
    case RitzOrder::LargestAlgebraic: return theta;
    case RitzOrder::SmallestAlgebraic: return -theta;
    case RitzOrder::LargestMagnitude: return std::abs(theta);
  }
  return theta;
}

/// w <- w - V V^T w over the first j columns (classical Gram-Schmidt, repeated while the
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

}  // namespace

VectorOperator one_column(BlockOperator op, int64_t n) {
  return [op = std::move(op), n](const double* x_in, double* y_out) {
    at::Tensor x = at::from_blob(const_cast<double*>(x_in), {n, 1}, at::kDouble);
    at::Tensor y = op(x).contiguous();   // y = op(x)
    std::copy(y.data_ptr<double>(), y.data_ptr<double>() + n, y_out);
  };
}

RitzPairs thick_restart_lanczos(const VectorOperator& op, int64_t n, const LanczosParams& p) {
  const int64_t m = p.ncv, k = p.k;
  TESSERA_CHECK(k >= 1 && k < m && m < n, InvalidInput, "lanczos: need 1 <= k < ncv < n (k ", k, ", ncv ", m,
                ", n ", n, ")");
  std::vector<double> v(static_cast<size_t>(n) * (m + 1));   // basis V [n, m + 1], column-major
  std::vector<double> t(static_cast<size_t>(m) * m, 0.0);    // T = V^T op V [m, m]
  std::vector<double> h(m + 1), tmp(m + 1), unused(m + 1);
  std::vector<double> ritz(static_cast<size_t>(n) * m);      // kept Ritz vectors at a restart
  at::Generator gen = at::detail::createCPUGenerator(p.seed);
  {
    at::Tensor start = at::randn({n}, gen, at::kDouble).contiguous();
    std::copy(start.data_ptr<double>(), start.data_ptr<double>() + n, v.data());
    vector_scale(v.data(), n, 1.0 / vector_norm(v.data(), n));
  }
  const double eps = std::numeric_limits<double>::epsilon();
  const double eps23 = std::pow(eps, 2.0 / 3.0);
  RitzPairs out;
  std::vector<double> theta(m);
  std::vector<int64_t> order(m);
  at::Tensor y;   // Ritz vectors of T [m, m], column i for theta[order[i]]
  int64_t kept = 0;
  double beta = 0.0, anorm = 0.0;
  for (int64_t restart = 0;; ++restart) {
    for (int64_t j = kept; j < m; ++j) {
      double* w = v.data() + (j + 1) * n;
      const double* vj = v.data() + j * n;
      op(vj, w);                                                       // w = op v_j
      ++out.applications;
      std::fill(h.begin(), h.end(), 0.0);
      double norm = 0.0;
      if (j > kept) {
        // three-term step: w -= β v_{j-1}, α = <v_j, w>, w -= α v_j; then one
        // reorthogonalisation pass against all of V (more only if it cancels)
        h[j - 1] = beta;
        h[j] = axpy_dot(w, vj - n, beta, vj, n);
        norm = axpy_norm(w, vj, h[j], n);
      } else {
        norm = vector_norm(w, n);                                      // after a restart: the arrow column
      }
      beta = orthogonalise(v.data(), n, j + 1, w, h.data(), tmp, norm);   // w ⟂ v_0..v_j, h = V^T op v_j
      for (int64_t i = 0; i <= j; ++i) t[i * m + j] = t[j * m + i] = h[i];
      anorm = std::max(anorm, std::abs(h[j]));
      if (beta <= eps * std::max(anorm, 1.0) * std::sqrt(static_cast<double>(n))) {
        // invariant subspace: continue from a random direction ⟂ V (its coupling is 0)
        at::Tensor r = at::randn({n}, gen, at::kDouble).contiguous();
        std::copy(r.data_ptr<double>(), r.data_ptr<double>() + n, w);
        orthogonalise(v.data(), n, j + 1, w, unused.data(), tmp, vector_norm(w, n));
        vector_scale(w, n, 1.0 / vector_norm(w, n));
        beta = 0.0;
      } else {
        vector_scale(w, n, 1.0 / beta);                               // v_{j+1} = w / β
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
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return score(ev[a], p.order) > score(ev[b], p.order); });
    at::Tensor idx = at::from_blob(order.data(), {m}, at::kLong).clone();
    y = evecs.index_select(1, idx).contiguous();
    const double* yp = y.data_ptr<double>();
    int64_t nconv = 0;
    for (int64_t i = 0; i < m; ++i) {
      theta[i] = ev[order[i]];
      anorm = std::max(anorm, std::abs(theta[i]));
    }
    for (int64_t i = 0; i < k; ++i) {
      const double resid = beta * std::abs(yp[(m - 1) * m + i]);    // ||op V y_i - θ_i V y_i||
      if (resid <= p.tol * std::max(eps23, std::abs(theta[i]))) ++nconv;
    }
    out.iterations = restart + 1;
    if (nconv >= k) {
      out.converged = true;
      break;
    }
    if (restart + 1 >= p.maxiter) {
      out.message = "lanczos: " + std::to_string(nconv) + " of " + std::to_string(k) + " Ritz pairs converged after " +
                    std::to_string(restart + 1) + " restarts";
      return out;
    }
    // thick restart: keep the best `kept` Ritz vectors (k plus up to half the rest, more as
    // pairs converge) and the residual direction v_m
    kept = std::min(m - 1, k + std::min(nconv, (m - k) / 2));
    if (kept == 1 && m >= 6) kept = m / 2;
    basis_combine(v.data(), n, m, yp, m, kept, ritz.data());                           // U = V Y[:, :kept]
    std::copy(v.data() + m * n, v.data() + (m + 1) * n, v.data() + kept * n);        // v_kept = v_m
    std::copy(ritz.begin(), ritz.begin() + kept * n, v.data());
    std::fill(t.begin(), t.end(), 0.0);
    for (int64_t i = 0; i < kept; ++i) t[i * m + i] = theta[i];                       // T = diag(θ)
  }
  out.theta = at::from_blob(theta.data(), {k}, at::kDouble).clone();
  at::Tensor vectors = at::empty({k, n}, at::kDouble);                                  // columns of V Y, as rows
  basis_combine(v.data(), n, m, y.data_ptr<double>(), m, k, vectors.data_ptr<double>());
  out.vectors = vectors.t();                                                             // [n, k] = V Y
  return out;
}

}  // namespace tessera::sla::detail
