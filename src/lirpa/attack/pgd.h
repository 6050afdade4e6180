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

/// Runs PGD from `options.restarts` points (uniform in the box, the centre, and `starts`
/// [M, n_in] if given), returning the best point. Stops early at a value <= 0 or when
/// `expired()` says so.
AttackResult pgd_attack(const BatchFn& f, const at::Tensor& lower, const at::Tensor& upper, const at::Tensor& c,
                        const at::Tensor& rhs, const AttackOptions& options, const at::Tensor& starts = {},
                        const std::function<bool()>& expired = {});

/// max_k (c_k y - rhs_k) for each row of y [N, n_out] -> [N] (-inf for an empty conjunction).
at::Tensor conjunction_violation(const at::Tensor& y, const at::Tensor& c, const at::Tensor& rhs);

}  // namespace tessera::lirpa::detail
