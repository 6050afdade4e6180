#pragma once
// PGD attack: projected signed-gradient descent with random restarts inside an input box,
// minimising the largest violation max_k (c_k y - rhs_k) of one output conjunction
// (a point with value <= 0 satisfies the conjunction: a counterexample candidate).

#include <ATen/core/Tensor.h>

#include <functional>

#include "tessera/lirpa/verify_options.h"

namespace tessera::lirpa::detail {

/// y = f(x) for a batch `[N, n_in]` -> `[N, n_out]`, float64, differentiable.
using BatchFn = std::function<at::Tensor(const at::Tensor&)>;

struct AttackResult {
  at::Tensor x;           ///< [n_in] the best point found
  double value = 0;       ///< max_k (c_k f(x) - rhs_k) there (<= 0: candidate)
};

/// Each row's best point of a PGD run and its value.
struct PgdRows {
  at::Tensor x;      ///< [N, n_in]
  at::Tensor value;  ///< [N] max_k (c_k f(x) - rhs_k)
};

/// Projected signed-gradient descent of max_k (c_k f(x) - rhs_k) from each row of `start`
/// [N, n_in], inside the box [lower, upper]: [n_in] (one box for all rows) or [N, n_in] (one
/// box per row). `steps` steps x <- clip(x - eta w sign(grad)), w the box's width, eta from
/// `step` decaying geometrically to `step * last_fraction`. Stops early once any row has a
/// value <= 0 or when `expired()` says so.
PgdRows pgd_rows(const BatchFn& f, const at::Tensor& lower, const at::Tensor& upper, const at::Tensor& start,
                 const at::Tensor& c, const at::Tensor& rhs, int steps, double step, double last_fraction,
                 const std::function<bool()>& expired = {});

/// `n` random starting points [n, n_in] in the box [lower, upper] ([n_in] each), reproducible
/// from `seed`: the first n - n/2 uniform; in the last n/2 each input is at its lower end
/// with probability 1/4, at its upper end with probability 1/4, else uniform. The margin of
/// a ReLU network is piecewise linear, so its minimum over the box lies at a vertex of a
/// linear region, often on the box's faces, which signed-gradient steps from inside reach
/// only for some starts (ACAS Xu 1_9 prop_7: bench/history/2026-12-04-lirpa-attack-faces.md).
at::Tensor random_starts(const at::Tensor& lower, const at::Tensor& upper, int64_t n, uint64_t seed);

/// Runs PGD from `options.restarts` points (random_starts, the centre, and `starts`
/// [M, n_in] if given), returning the best point: pgd_rows with the one box for every row,
/// `options.steps` steps decaying to 1/100 of `options.step`. Stops early at a value <= 0 or
/// when `expired()` says so.
AttackResult pgd_attack(const BatchFn& f, const at::Tensor& lower, const at::Tensor& upper, const at::Tensor& c,
                        const at::Tensor& rhs, const AttackOptions& options, const at::Tensor& starts = {},
                        const std::function<bool()>& expired = {});

/// max_k (c_k y - rhs_k) for each row of y [N, n_out] -> [N] (-inf for an empty conjunction).
at::Tensor conjunction_violation(const at::Tensor& y, const at::Tensor& c, const at::Tensor& rhs);

}  // namespace tessera::lirpa::detail
