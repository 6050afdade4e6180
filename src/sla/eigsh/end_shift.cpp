// eigsh's Auto shift-invert at an end of the spectrum: see end_shift.h.

#include "sla/eigsh/end_shift.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "sla/backend_lookup.h"
#include "tessera/core/error.h"
#include "tessera/sla/solve.h"

namespace tessera::sla::detail {
namespace {

/// Solves' worth of the factor a shift-invert run costs: the factorisation plus the
/// Lanczos run on (A - σ I)^{-1} (tens of solves for k = 6, ncv 20).
constexpr double kShiftInvertProducts = 100.0;

}  // namespace

SparseTensor shifted(const SparseTensor& a, double sigma) {
  const int64_t n = a.rows();
  at::Tensor diag = at::arange(n, at::kLong);
  at::Tensor rows = at::cat({a.row_indices().cpu(), diag});
  at::Tensor cols = at::cat({a.col_idx().to(at::kCPU, at::kLong), diag});
  at::Tensor vals = at::cat({a.values().detach().to(at::kCPU, at::kDouble), at::full({n}, -sigma, at::kDouble)});
  return SparseTensor::from_coo(vals, rows, cols, n, n);
}

std::pair<double, double> gershgorin_bounds(const SparseTensor& a64) {
  const int64_t n = a64.rows();
  at::Tensor rows = a64.row_indices().cpu();
  at::Tensor cols = a64.col_idx().to(at::kCPU, at::kLong);
  at::Tensor v = a64.values().detach().to(at::kCPU, at::kDouble);
  at::Tensor on = rows == cols;
  at::Tensor diag = at::zeros({n}, at::kDouble).index_add_(0, rows, at::where(on, v, at::zeros_like(v)));
  at::Tensor off = at::zeros({n}, at::kDouble).index_add_(0, rows, at::where(on, at::zeros_like(v), v.abs()));
  return {(diag - off).min().item<double>(), (diag + off).max().item<double>()};
}

int64_t shift_invert_budget(const SparseTensor& a64, int64_t ncv, Backend solver_backend) {
  if (!a64.values().device().is_cpu()) return 0;
  if (solver_backend == Backend::Auto && preferred_direct_backend(Method::Cholesky) == Backend::Auto) return 0;
  const double factor_bytes = estimated_factor_bytes(a64, /*lu=*/false);
  if (factor_bytes > SolveOptions{}.memory_budget_bytes) return 0;
  const double n = static_cast<double>(a64.rows());
  const double product = static_cast<double>(a64.nnz()) + 2.0 * static_cast<double>(ncv) * n;
  const double solve = 2.0 * factor_bytes / 12.0;
  const double budget = std::ceil(kShiftInvertProducts * solve / product);
  return std::max<int64_t>(2 * ncv, static_cast<int64_t>(std::min(budget, 1e12)));
}

EndShift factor_beyond_end(const SparseTensor& a64, Which which, const std::vector<double>& ritz,
                           Backend solver_backend) {
  const bool smallest = which == Which::Smallest;
  const auto [lo, hi] = gershgorin_bounds(a64);
  const double bound = smallest ? lo : hi;
  const double out = smallest ? -1.0 : 1.0;   // the direction beyond the wanted end
  std::vector<double> candidates;
  if (!ritz.empty()) {
    // θ_1 is a Rayleigh quotient, so it is on the spectrum's side of the end; one span of the
    // k estimates further out is a guess the factorisation then confirms or refutes
    const double span = std::abs(ritz.back() - ritz.front());
    const double guess = ritz.front() + out * span;
    if (span > 0 && std::isfinite(guess) && out * (bound - guess) > 0) candidates.push_back(guess);
  }
  candidates.push_back(bound);
  candidates.push_back(bound + out * 1e-6 * std::max(hi - lo, std::numeric_limits<double>::min()));
  SolveOptions so;
  so.backend = solver_backend;
  so.method = Method::Cholesky;   // no fallback: success certifies B positive definite
  std::ostringstream tried;
  EndShift result;
  for (double sigma : candidates) {
    tried << (tried.tellp() > 0 ? ", " : "") << "sigma = " << sigma;
    try {
      SparseTensor b = shifted(a64, sigma);
      if (!smallest) b = b.with_values(-b.values());   // σ I - A
      auto factor = std::make_shared<BatchSolver>(b, so);
      SolveInfo probe;
      factor->solve(at::ones({1, a64.rows(), 1}, at::kDouble), false, probe);
      if (probe.status == SolveStatus::Converged) {
        tried << " (positive definite)";
        result.sigma = sigma;
        result.factor = std::move(factor);
        break;
      }
      tried << " (" << to_string(probe.status) << ")";
    } catch (const Error& e) {
      tried << " (" << e.what() << ")";
    }
  }
  result.tried = tried.str();
  return result;
}

}  // namespace tessera::sla::detail
