// Single-vector thick-restart Lanczos that finds every copy of a multiple eigenvalue: see
// lanczos.h. The runs themselves are thick_restart_run (thick_restart.h).

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "sla/eigsh/lanczos.h"
#include "sla/eigsh/thick_restart.h"
#include "tessera/core/error.h"

namespace tessera::sla::detail {

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
  at::Generator gen = at::detail::createCPUGenerator(p.seed);
  LockedBasis basis;
  basis.n = n;
  RitzPairs out;
  auto count = [&](const RunResult& r) {
    out.iterations += r.restarts;
    out.applications += r.applications;
  };
  // 1. the k wanted pairs of op (one Krylov space: one vector of each eigenspace)
  const RunResult first = thick_restart_run(op, basis, p, gen, [&](const auto& theta, const auto& resid) {
    for (int64_t i = 0; i < k; ++i) {
      if (!ritz_converged(theta[i], resid[i], p.tol)) return false;
    }
    return true;
  });
  count(first);
  out.last_ritz_values = first.theta;
  if (!first.stopped) {
    int64_t nconv = 0;
    for (int64_t i = 0; i < k; ++i) nconv += ritz_converged(first.theta[i], first.resid[i], p.tol);
    out.message = "lanczos: " + std::to_string(nconv) + " of " + std::to_string(k) + " Ritz pairs converged after " +
                  std::to_string(first.restarts) + " restarts";
    return out;
  }
  std::vector<double> values = first.theta;   // of the locked columns, in column order
  basis.locked = k;
  // 2. lock them and look for a missed copy: the best Ritz pair of P op P (P = I - L L^T)
  // from a random start ⟂ L, which has a component along every eigenvector that L lacks.
  // A run stops when that pair converged, or when it is worse than the k-th best locked
  // value by more than its residual (an eigenvalue lies within the residual of it); a
  // converged pair better than the k-th is locked too, and the search repeats.
  LanczosParams q = p;
  q.k = 1;
  for (;;) {
    q.ncv = std::min(m, n - basis.locked - 1);
    if (q.ncv < 2) break;   // L spans all but one direction
    if (p.max_applications > 0) {
      if (out.applications >= p.max_applications) {
        out.message = "lanczos: " + std::to_string(k) + " Ritz pairs converged, but the search for missed copies " +
                      "of multiple eigenvalues reached the limit of " + std::to_string(p.max_applications) +
                      " products";
        return out;
      }
      q.max_applications = p.max_applications - out.applications;
    }
    std::vector<double> scores(values.size());
    for (size_t i = 0; i < values.size(); ++i) scores[i] = ritz_score(values[i], p.order);
    std::nth_element(scores.begin(), scores.begin() + (k - 1), scores.end(), std::greater<double>());
    const double kth = scores[k - 1];   // score of the k-th best locked value
    const RunResult r = thick_restart_run(op, basis, q, gen, [&](const auto& theta, const auto& resid) {
      return ritz_converged(theta[0], resid[0], p.tol) || kth - ritz_score(theta[0], p.order) >= resid[0];
    });
    count(r);
    if (!r.stopped) {
      out.message = "lanczos: " + std::to_string(k) + " Ritz pairs converged, but the search for missed copies of " +
                    "multiple eigenvalues did not settle after " + std::to_string(r.restarts) + " restarts";
      return out;
    }
    const double margin = p.tol * std::max(std::abs(r.theta[0]), std::numeric_limits<double>::min());
    const bool better = ritz_score(r.theta[0], p.order) > kth + margin;
    if (!(better && ritz_converged(r.theta[0], r.resid[0], p.tol))) break;
    values.push_back(r.theta[0]);   // a missed copy (or a missed eigenvalue): lock it
    ++basis.locked;
  }
  // the k best locked pairs, best first
  std::vector<int64_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return ritz_score(values[a], p.order) > ritz_score(values[b], p.order);
  });
  std::vector<double> theta(k);
  at::Tensor vectors = at::empty({k, n}, at::kDouble);   // columns of L, as rows
  for (int64_t i = 0; i < k; ++i) {
    theta[i] = values[order[i]];
    const double* col = basis.v.data() + order[i] * n;
    std::copy(col, col + n, vectors.data_ptr<double>() + i * n);
  }
  out.theta = at::from_blob(theta.data(), {k}, at::kDouble).clone();
  out.vectors = vectors.t();   // [n, k]
  out.converged = true;
  return out;
}

}  // namespace tessera::sla::detail
