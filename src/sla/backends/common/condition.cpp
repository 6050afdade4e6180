#include "sla/backends/common/condition.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "sla/backends/common/csr_checks.h"

namespace tessera::sla::backends::detail {
namespace {

constexpr int kMaxIterations = 5;

double norm1(const std::vector<double>& y) {
  double s = 0.0;
  for (double v : y) s += std::abs(v);
  return s;
}

bool all_finite(const std::vector<double>& y) {
  for (double v : y) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

}  // namespace

double estimate_inverse_norm1(int64_t n, const InPlaceSolve& solve) {
  const auto un = static_cast<size_t>(n);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> x(un, 1.0 / static_cast<double>(n));  // x = (1/n) 1
  std::vector<double> y(un), z(un), sign(un), previous_sign(un, 0.0);
  double estimate = 0.0;
  for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
    y = x;
    solve(y.data(), false);  // y = A^{-1} x
    if (!all_finite(y)) return inf;
    const double candidate = norm1(y);
    if (iteration > 0 && candidate <= estimate) break;  // no progress
    estimate = candidate;
    for (size_t i = 0; i < un; ++i) sign[i] = y[i] >= 0.0 ? 1.0 : -1.0;  // xi = sign(y)
    if (iteration > 0 && sign == previous_sign) break;                  // converged
    z = sign;
    solve(z.data(), true);  // z = A^{-T} xi
    if (!all_finite(z)) return inf;
    size_t j = 0;
    double ztx = 0.0;
    for (size_t i = 0; i < un; ++i) {
      if (std::abs(z[i]) > std::abs(z[j])) j = i;
      ztx += z[i] * x[i];
    }
    if (iteration > 0 && std::abs(z[j]) <= ztx) break;  // |z|_inf <= z^T x: local maximum
    std::fill(x.begin(), x.end(), 0.0);
    x[j] = 1.0;  // x = e_j
    previous_sign = sign;
  }
  // Alternative vector x_i = (-1)^i (1 + i / (n - 1)) guards against unlucky cancellation.
  for (size_t i = 0; i < un; ++i) {
    const double magnitude = n > 1 ? 1.0 + static_cast<double>(i) / static_cast<double>(n - 1) : 1.0;
    y[i] = (i % 2 == 0 ? 1.0 : -1.0) * magnitude;
  }
  solve(y.data(), false);
  if (!all_finite(y)) return inf;
  const double alternative = 2.0 * norm1(y) / (3.0 * static_cast<double>(n));
  return std::max(estimate, alternative);
}

double estimate_rcond(const CsrMatrix& a, const InPlaceSolve& solve) {
  const double anorm = detail::norm1(a);
  if (anorm == 0.0) return 0.0;
  const double inverse_norm = estimate_inverse_norm1(a.rows, solve);
  if (!std::isfinite(inverse_norm) || inverse_norm == 0.0) return 0.0;
  return 1.0 / (anorm * inverse_norm);  // rcond = 1 / (||A||_1 ||A^{-1}||_1)
}

SolveStatus status_from_rcond(const CsrMatrix& a, const InPlaceSolve& solve, const std::string& who,
                              std::string& message) {
  const double rcond = estimate_rcond(a, solve);
  if (rcond >= kSingularRcond) return SolveStatus::Converged;
  std::ostringstream out;
  out << who << ": matrix is singular to working precision (estimated reciprocal condition number "
      << rcond << " < " << kSingularRcond << ")";
  message = out.str();
  return SolveStatus::Singular;
}

}  // namespace tessera::sla::backends::detail
