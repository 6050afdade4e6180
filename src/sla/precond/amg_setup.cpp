// Set-up of the smoothed-aggregation hierarchy: aggregation, prolongators, coarse operators.

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>
#include <vector>

#include "sla/precond/amg.h"
#include "sla/precond/row_view.h"
#include "tessera/core/error.h"

namespace tessera::sla::detail {
namespace {

/// Largest coarsest level solved by a dense inverse; a larger one (coarsening stalled) is smoothed.
constexpr int64_t kDenseLimit = 2000;

/// Greedy aggregation in four passes over the strength graph
/// (j strong for i when |a_ij| >= theta sqrt(|a_ii a_jj|), j != i); every row with an
/// off-diagonal entry ends in an aggregate. `rows` is a row view (row_view.h).
template <typename Rows>
int64_t aggregate_rows(const Rows& rows, const double* d, int64_t n, double theta, std::vector<int64_t>& agg) {
  auto strong = [&](int64_t i, int64_t j, double v) {
    return j != i && v != 0.0 && std::abs(v) >= theta * std::sqrt(std::abs(d[i] * d[j]));
  };
  agg.assign(n, -1);
  int64_t count = 0;
  // Pass 1: a node whose strong neighbours are all free starts an aggregate with them.
  for (int64_t i = 0; i < n; ++i) {
    if (agg[i] >= 0) continue;
    bool free = true, any = false;
    rows.for_each(i, [&](int64_t j, double v) {
      if (!free || !strong(i, j, v)) return;
      any = true;
      free = agg[j] < 0;
    });
    if (!free || !any) continue;
    agg[i] = count;
    rows.for_each(i, [&](int64_t j, double v) {
      if (strong(i, j, v)) agg[j] = count;
    });
    ++count;
  }
  // Pass 2: a free node joins the pass-1 aggregate it is most strongly connected to.
  std::vector<int64_t> join(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    if (agg[i] >= 0) continue;
    double best = 0.0;
    rows.for_each(i, [&](int64_t j, double v) {
      if (strong(i, j, v) && agg[j] >= 0 && std::abs(v) > best) {
        best = std::abs(v);
        join[i] = agg[j];
      }
    });
  }
  for (int64_t i = 0; i < n; ++i) {
    if (join[i] >= 0) agg[i] = join[i];
  }
  // Pass 3: what is left forms aggregates with its free strong neighbours.
  for (int64_t i = 0; i < n; ++i) {
    if (agg[i] >= 0) continue;
    bool any = false;
    rows.for_each(i, [&](int64_t j, double v) {
      if (strong(i, j, v) && agg[j] < 0) { agg[j] = count; any = true; }
    });
    if (any) agg[i] = count++;
  }
  // Pass 4: a row still left (only weak connections) joins the aggregate it is most strongly
  // connected to, or starts one with its free neighbours. Left out of the coarse space it would
  // break P 1 = 1 there, and A_c = P^T A P would gain a spurious reaction term from each such
  // row: their number grows with n, the smoothest modes' energy does not, so the iterations
  // would grow with n (log-normal diffusion). Rows without off-diagonals stay out (the
  // smoother solves them). A row that joined in this pass is no target for the next ones
  // (only when nothing else is): on the first coarse level of 3D Poisson almost every row is
  // weak at theta 0.08 (about 30 entries per row, each below 0.08 of the diagonal), and rows
  // joining the aggregate of a row that had just joined chained along the numbering into
  // aggregates of thousands of rows (6,312 at 128^3); the coarse spaces lost their
  // approximation and the iterations grew with n (36 at 160^3, 112 at 392^3).
  std::vector<char> joined(n, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (agg[i] >= 0) continue;
    double best = 0.0, best_joined = 0.0;
    int64_t target = -1, target_joined = -1;
    bool any_free = false;
    rows.for_each(i, [&](int64_t j, double v) {
      if (j == i || v == 0.0) return;
      if (agg[j] < 0) {
        any_free = true;
      } else if (joined[j]) {                                     // a pass-4 joiner: the last resort
        if (std::abs(v) > best_joined) {
          best_joined = std::abs(v);
          target_joined = agg[j];
        }
      } else if (std::abs(v) > best) {                             // the most strongly connected aggregate
        best = std::abs(v);
        target = agg[j];
      }
    });
    if (target >= 0) {
      agg[i] = target;
      joined[i] = 1;
    } else if (any_free) {                                         // a new aggregate with the free neighbours
      rows.for_each(i, [&](int64_t j, double v) {
        if (j != i && v != 0.0 && agg[j] < 0) agg[j] = count;
      });
      agg[i] = count++;
    } else if (target_joined >= 0) {                               // every neighbour a joiner
      agg[i] = target_joined;
      joined[i] = 1;
    }
  }
  return count;
}

/// Halvings of the strength threshold tried on one level (theta down to theta / 2^10).
constexpr int kMaxHalvings = 10;

/// The level's threshold: the largest strength / 2^k (k <= kMaxHalvings) at which at most
/// `weak_share` of the rows with an off-diagonal have no strong connection (see level_strength).
template <typename Rows>
double level_strength_rows(const Rows& rows, const double* d, int64_t n, double strength, double weak_share) {
  int64_t weak[kMaxHalvings + 1] = {};   // weak[k]: rows whose strongest connection is below strength / 2^k
  int64_t connected = 0;
#pragma omp parallel for schedule(static) reduction(+ : weak[:kMaxHalvings + 1], connected) if (n >= 65536)
  for (int64_t i = 0; i < n; ++i) {
    double s = -1.0;                                                   // max_j |a_ij| / sqrt(|a_ii a_jj|)
    rows.for_each(i, [&](int64_t j, double v) {
      if (j != i && v != 0.0) s = std::max(s, std::abs(v) / std::sqrt(std::abs(d[i] * d[j])));
    });
    if (s < 0.0) continue;                                             // no off-diagonal
    ++connected;
    for (int k = 0; k <= kMaxHalvings && s < std::ldexp(strength, -k); ++k) ++weak[k];
  }
  for (int k = 0; k < kMaxHalvings; ++k) {
    if (static_cast<double>(weak[k]) <= weak_share * static_cast<double>(connected)) return std::ldexp(strength, -k);
  }
  return std::ldexp(strength, -kMaxHalvings);
}

/// Inverse of a small dense matrix by Gauss-Jordan elimination with partial pivoting; a
/// (numerically) zero pivot leaves that direction out (a pseudo-inverse on singular levels).
at::Tensor dense_inverse(const at::Tensor& dense) {
  const int64_t n = dense.size(0);
  at::Tensor m = at::cat({dense.to(at::kDouble).contiguous(), at::eye(n, at::kDouble)}, 1).contiguous();
  double* a = m.data_ptr<double>();
  const int64_t w = 2 * n;
  const double scale = n > 0 ? dense.abs().max().item<double>() : 0.0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t piv = k;
    for (int64_t i = k + 1; i < n; ++i) {
      if (std::abs(a[i * w + k]) > std::abs(a[piv * w + k])) piv = i;
    }
    if (std::abs(a[piv * w + k]) <= 1e-13 * scale) {
      for (int64_t j = 0; j < w; ++j) a[k * w + j] = 0.0;                        // drop this direction
      continue;
    }
    if (piv != k) {
      for (int64_t j = 0; j < w; ++j) std::swap(a[k * w + j], a[piv * w + j]);
    }
    const double inv = 1.0 / a[k * w + k];
    for (int64_t j = 0; j < w; ++j) a[k * w + j] *= inv;                       // row k /= pivot
    for (int64_t i = 0; i < n; ++i) {
      const double f = a[i * w + k];
      if (i == k || f == 0.0) continue;
      for (int64_t j = 0; j < w; ++j) a[i * w + j] -= f * a[k * w + j];        // row i -= f row k
    }
  }
  return m.narrow(1, n, n).contiguous();
}

}  // namespace

int64_t aggregate(const CsrData& a, double strength, std::vector<int64_t>& aggregate_of) {
  int64_t count = 0;
  const at::Tensor diag = a.diagonal();
  with_rows(a, [&](const auto& rows) {
    count = aggregate_rows(rows, diag.data_ptr<double>(), a.rows, strength, aggregate_of);
  });
  return count;
}

double level_strength(const CsrData& a, double strength, double weak_share) {
  double theta = strength;
  const at::Tensor diag = a.diagonal();
  with_rows(a, [&](const auto& rows) {
    theta = level_strength_rows(rows, diag.data_ptr<double>(), a.rows, strength, weak_share);
  });
  return theta;
}

double estimate_lambda_max(const CsrData& a, const at::Tensor& inv_diag, int steps) {
  // a random start from a fixed seed (the same hierarchy every run); a quasi-periodic start
  // such as frac(0.618 i) missed the top of 3D Poisson's spectrum at 100^3
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(20261202);
  at::Tensor v = at::rand({a.rows}, gen, at::TensorOptions().dtype(at::kDouble)).add_(0.5).to(inv_diag.device());
  v.div_(v.norm());
  // two vectors for all steps, written in place: a fresh [rows] tensor per step costs its
  // page faults again (glibc maps each block above 32 MB anew), about as much as the product
  at::Tensor w = at::empty_like(v);
  double lambda = 0.0;
  for (int k = 0; k < steps; ++k) {
    a.apply(v, w);                                                              // w = A v
    w.mul_(inv_diag);                                                           // w = D^{-1} A v
    lambda = w.norm().item<double>();                                           // ||D^{-1} A v|| -> lambda_max
    if (!(lambda > 0.0)) return 1.0;
    w.div_(lambda);                                                             // v = w / lambda
    std::swap(v, w);
  }
  return lambda;
}

AmgHierarchy build_amg(const CsrData& fine, const AmgOptions& options) {
  TESSERA_CHECK(fine.rows == fine.cols, DimensionMismatch, "AMG needs a square matrix, got ", fine.rows, "x",
                fine.cols);
  TESSERA_CHECK(options.smoother_degree >= 1 && options.max_levels >= 1 && options.smoother_ratio > 1.0 &&
                    options.weak_share >= 0.0,
                InvalidInput, "AMG options: smoother_degree >= 1, max_levels >= 1, smoother_ratio > 1, weak_share >= 0");
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); };
  AmgSetupSeconds seconds;
  std::vector<AmgLevel> levels;
  CsrData a = fine;
  double theta = options.strength;                                             // strength of connection, per level
  while (true) {
    auto t0 = clock::now();
    AmgLevel level;
    a.prepare();                                                               // products of this level's A
    level.a = a;
    at::Tensor d = a.diagonal();
    TESSERA_CHECK(!(d == 0).any().item<bool>(), InvalidInput, "AMG: the matrix has a zero on its diagonal (level ",
                  levels.size(), ")");
    level.inv_diag = d.reciprocal();                                           // D^{-1}
    if (a.matrix_free() && a.rows > 0 && (d == d[0]).all().item<bool>()) {
      // one diagonal value (a constant-coefficient stencil storing it on every row): D^{-1}
      // as one number broadcast over the rows, 8 bytes instead of 8 per row; the products
      // with it are the same bits
      level.inv_diag = level.inv_diag.narrow(0, 0, 1).clone().expand({a.rows});
    }
    d = at::Tensor();                                                          // not held through the level
    level.lambda_max = 1.1 * estimate_lambda_max(a, level.inv_diag, 12);
    seconds.spectrum += since(t0);
    const bool last = a.rows <= options.coarse_size || static_cast<int>(levels.size()) + 1 >= options.max_levels;
    t0 = clock::now();
    std::vector<int64_t> agg;
    // the level's own threshold, from the previous level's down: a coarse level of a 3D problem
    // has more and smaller off-diagonals per row than the finest (about 30 on 3D Poisson's
    // first, each below 0.08 of the diagonal), so theta = 0.08 would leave most of its rows
    // without a strong connection; the levels below it are denser still
    if (!last) theta = level_strength(a, theta, options.weak_share);
    const int64_t coarse = last ? 0 : aggregate(a, theta, agg);
    seconds.aggregation += since(t0);
    if (last || coarse == 0 || coarse >= a.rows) {                             // coarsening done or stalled
      levels.push_back(std::move(level));
      break;
    }
    t0 = clock::now();
    level.p = smoothed_prolongator(a, level.inv_diag, level.lambda_max, agg, coarse);
    seconds.prolongator += since(t0);
    t0 = clock::now();
    // A_c = P^T (A P): on the finest level without A P or P^T stored (the set-up's peak
    // there), on the coarser ones (short, and with long rows in 3D) with both, freed after
    a = levels.empty() ? galerkin_product(a, level.p) : csr_triple_product(csr_transpose(level.p), a, level.p);
    seconds.galerkin += since(t0);
    level.p.prepare();
    levels.push_back(std::move(level));
  }
  auto t0 = clock::now();
  at::Tensor coarse_inverse;
  const CsrData& last = levels.back().a;
  if (last.rows <= kDenseLimit) coarse_inverse = dense_inverse(last.to_dense());
  seconds.coarse_inverse = since(t0);
  AmgHierarchy h(std::move(levels), coarse_inverse, options);
  h.setup_seconds = seconds;
  return h;
}

}  // namespace tessera::sla::detail
