#pragma once
// Complete verification on a tensor-parallel network: ReLU-splitting branch and bound whose
// bounds are TP CROWN passes (each rank holds its blocks of weights, bounds, split
// constraints and coefficients).

#include <ATen/core/Tensor.h>

#include <functional>
#include <string>

#include "lirpa/bab/bab.h"
#include "lirpa/verify/run_clock.h"
#include "tessera/lirpa/tensor_parallel.h"
#include "tessera/lirpa/verify.h"

namespace tessera::lirpa::detail {

struct TpBabContext {
  const TpNetwork& net;
  const VerifyOptions& options;
  const RunClock& clock;
  /// Checks a candidate input (the same on every rank) with a forward pass; true when it is
  /// a confirmed counterexample (the caller keeps it). Collective.
  std::function<bool(const at::Tensor&)> confirm;
  ProgressFn progress;  ///< may be empty (ranks other than 0)
  std::string phase;    ///< its name in progress reports
};

/// ReLU splitting: each sub-domain is the box plus split ReLUs (z >= 0 or z <= 0), bounded by
/// TP CROWN with each split neuron's bounds clamped to its side (intermediate bounds
/// intersected with the parent's); the worst domain first; BaBSR over every rank's neurons
/// picks the ReLU to split. Without beta multipliers the split constraints only act through
/// the clamped bounds, so a domain with every ReLU split may stay unproven (Exhausted:
/// `unknown`, never a wrong `unsat`). Collective: every rank runs the same search.
BabOutcome tp_relu_split_bab(const TpBabContext& ctx, const BabProblem& problem);

/// Input splitting (low-dimensional inputs): each sub-domain is a box bounded by TP CROWN
/// (intermediate bounds intersected with its parent's), the worst first, bisected along the
/// smear dimension |a_i| (u_i - l_i) of its best row. Collective.
BabOutcome tp_input_split_bab(const TpBabContext& ctx, const BabProblem& problem);

}  // namespace tessera::lirpa::detail
