#pragma once
// The bound propagation algorithms over a Graph and a BoundState.

#include <ATen/core/Tensor.h>

#include "bound_state.h"
#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/graph.h"

namespace tessera::lirpa::detail {

/// IBP: bounds of every node up to the output, from the input bounds in `state`.
void ibp_all(const Graph& graph, BoundState& state, const OpEnv& env);

/// CROWN backward pass: `[S]` lower bounds of the rows `a` of linear functions of node
/// `start`, with the relaxations of the activations on the way (using `state.alpha` when
/// `use_alpha`). Bounds of every activation input before `start` must be in `state`.
at::Tensor crown_lower(const Graph& graph, const BoundState& state, const OpEnv& env, int start, const APtr& a,
                       bool use_alpha);

/// Bounds of the inputs of every activation up to node `upto`, each by CROWN (rows
/// [I; -I] in chunks), like auto_LiRPA's default.
void crown_intermediate(const Graph& graph, BoundState& state, const OpEnv& env, int upto);

/// CROWN bounds (`[D, |idx|]` each, one row per domain) of the flat positions `idx` of node
/// p, from rows [e_idx; -e_idx] for every domain (in chunks unless `use_alpha`).
Interval crown_rows(const Graph& graph, const BoundState& state, const OpEnv& env, int p, const at::Tensor& idx,
                    bool use_alpha);

/// The positions of node p whose bounds `consumer` needs tighter than the reference bounds
/// `[D, *shape]`: `idx` those some domain needs, `need` `[D, |idx|]` which domain needs which
/// (each domain as if bounded alone). None for a linear operator on the input, whose
/// reference IBP bounds are exact. With `agree` (ranks bounding different domains), `idx` is
/// the union over the ranks (a collective).
struct NeededBounds {
  at::Tensor idx;
  at::Tensor need;
};
NeededBounds positions_needing_bounds(const Graph& graph, const BoundOp& consumer, int p, const Interval& ref,
                                      dist::Communicator* agree = nullptr);

/// True when node p's intermediate bounds are its `ibp` of its inputs' `bounds`: p is a
/// monotone elementwise op (BoundOp::monotone) whose inputs all have bounds. That interval
/// is p's exact range over them, never looser than a CROWN pass from p (no rows needed).
bool bounds_from_inputs(const Graph& graph, const std::vector<std::optional<Interval>>& bounds, int p);

/// The reference bounds `[D, *shape]` with `tight` (`[D, |idx|]`, crown_rows) put at the
/// positions each domain needs (intersected with the reference there when `intersect`).
Interval with_needed(const Interval& ref, const NeededBounds& needed, const Interval& tight, bool intersect = false);

/// The rows [C; -C] (or [I; -I]) over the output node.
APtr spec_rows(const Graph& graph, const at::Tensor& c, at::ScalarType dtype);

/// The rows sign * C (or sign * I) over the output node.
APtr spec_side(const Graph& graph, const at::Tensor& c, at::ScalarType dtype, double sign);

/// Adam state of one parameter tensor.
struct AdamSlot {
  at::Tensor m, v;
};

/// One projected Adam step (descent) on p in [0, upper] (the slopes: [0, 1]) with gradient g at step t.
void adam_step(at::Tensor& p, const at::Tensor& g, AdamSlot& s, const AlphaOptions& o, double lr, int t,
               double upper = 1.0);

/// alpha-CROWN on the rows `a` over the output (intermediate bounds fixed, from CROWN):
/// returns `[S]` lower bounds, the best per row; `iterations` receives the steps taken.
/// `tightest` (when set, sized like `state.bounds`): every activation input's bounds
/// intersected with those of each step (each step's are sound, so is their intersection).
/// `best_final` (when set) receives the final pass's parameters at each row's best step
/// (activation node id -> `[S, *shape]`), which `options.final_start` takes back.
at::Tensor alpha_crown_lower(const Graph& graph, BoundState& state, const OpEnv& env, const APtr& a,
                             const AlphaOptions& options, int& iterations,
                             std::vector<std::optional<Interval>>* tightest = nullptr,
                             std::map<int, at::Tensor>* best_final = nullptr);

/// `a` intersected with `b` (either may be absent), detached from autograd.
std::optional<Interval> intersect(const std::optional<Interval>& a, const std::optional<Interval>& b);

}  // namespace tessera::lirpa::detail
