#pragma once
// Incomplete verification: CROWN, then alpha-CROWN, on every input box's specification rows.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lirpa/verify/run_clock.h"
#include "tessera/lirpa/verify.h"

namespace tessera::lirpa::detail {

/// Marks open[c][d] = false for each disjunct d of case c proven infeasible: some row k of
/// it has lower(c_k y) - rhs_k > margin over the case's box. Returns the method that closed
/// the last open disjunct ("crown" or "alpha-crown"), or "" when some remain open.
/// `shard_rows` (sharded state, several ranks): passed to compute_bounds as
/// BoundOptions::shard_rows (every rank calls with the same arguments). `intermediate`
/// receives, per property case, the tightest intermediate bounds of its box (CROWN's, then
/// alpha-CROWN's, which starts from them instead of recomputing them); empty for a case
/// that no stage bounded. `final_alpha` receives, per case, the last alpha-CROWN stage's final
/// parameters at each row's best step (BoundsResult::final_alpha: node id -> `[rows, *shape]`,
/// the rows of the case's spec_matrix() first); empty without an alpha stage.
std::string incomplete_verification(const Graph& graph, const Property& property, const VerifyOptions& options,
                                    std::vector<std::vector<bool>>& open, const ProgressFn& progress,
                                    const RunClock& clock, std::shared_ptr<dist::Communicator> shard_rows,
                                    std::vector<std::map<int, Interval>>& intermediate,
                                    std::vector<std::map<int, at::Tensor>>& final_alpha);

/// The disjuncts proven infeasible from lower bounds `g_lower` of the stacked rows
/// (C y - rhs, in the order of spec_matrix()): max over each disjunct's rows > margin.
std::vector<bool> proven_disjuncts(const PropertyCase& pc, const at::Tensor& g_lower, double margin);

}  // namespace tessera::lirpa::detail
