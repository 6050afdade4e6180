#pragma once
// The bound propagation algorithms over a Graph and a BoundState.

#include <ATen/core/Tensor.h>

#include <utility>
#include <vector>

#include "bound_state.h"
#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/graph.h"

namespace tessera::lirpa::detail {

/// IBP: bounds of every node up to the output, from the input bounds in `state`.
void ibp_all(const Graph& graph, BoundState& state, const OpEnv& env);

/// CROWN backward pass: `[S]` lower bounds of the rows `a` of linear functions of node
/// `start`, with the relaxations of the activations on the way (using `state.alpha` when
/// `use_alpha`). Bounds of every activation input before `start` must be in `state`.
/// `rows_split`: `a` is this rank's block of the rows of a whole node, every rank passing its
/// own (through tensor-parallel zones: zone_pass.h).
at::Tensor crown_lower(const Graph& graph, const BoundState& state, const OpEnv& env, int start, const APtr& a,
                       bool use_alpha, bool rows_split = false);

/// Bounds of the inputs of every activation up to node `upto`, each by CROWN (rows
/// [I; -I] in chunks), like auto_LiRPA's default. With `state.forward_forms`, the reference
/// that tells which ReLU inputs need CROWN is IBP intersected with forward linear bounds.
void crown_intermediate(const Graph& graph, BoundState& state, const OpEnv& env, int upto);

/// CROWN bounds (`[D, k]` each) of the flat positions `idx` (`[D, k]`: domain d's own k
/// positions) of node p, from rows [e_idx[d]; -e_idx[d]] for every domain d (in chunks unless
/// `use_alpha`).
Interval crown_rows(const Graph& graph, const BoundState& state, const OpEnv& env, int p, const at::Tensor& idx,
                    bool use_alpha);

/// The positions of node p whose bounds `consumer` needs tighter than the reference bounds
/// `[D, *shape]`, each domain its own (as if bounded alone): `idx` `[D, k]` the positions of
/// domain d, those it needs first (ascending), padded up to the largest count k over the
/// domains with positions it does not need (ascending, so a domain's rows depend on its own
/// bounds and k only); `need` `[D, k]` which of them it needs. One domain: exactly its needed
/// positions. None (k = 0) for a linear operator on the input, whose reference IBP bounds are
/// exact. With `agree` (ranks bounding different domains), k is the largest over the ranks (a
/// collective), so every rank runs the same passes with the rows one process would give its
/// domains.
struct NeededBounds {
  at::Tensor idx;
  at::Tensor need;
  int64_t per_domain() const { return idx.size(1); }  ///< k
  /// None for `domains` domains.
  static NeededBounds none(int64_t domains);
};
NeededBounds positions_needing_bounds(const Graph& graph, const BoundOp& consumer, int p, const Interval& ref,
                                      dist::Communicator* agree = nullptr);

/// Groups of domains (boxes) for a backward pass of their needed positions, which pads every
/// domain's rows to its group's largest count: counts [B] (long) -> indices of each group
/// (they partition 0..B-1; ascending counts), cut greedily where a cut saves at least 10% of
/// the padded rows, at most `max_groups`, each group at least `min_rows` domains.
std::vector<at::Tensor> padding_groups(const at::Tensor& counts, int max_groups = 4, int64_t min_rows = 32);

/// crown_rows at the positions `needed` of node p: `[D, k]` lower and upper bounds (the
/// padding positions too, or -inf / +inf where a domain's group did not bound them). Without
/// slopes, records or shards, a batch whose padding (every domain carries the largest count
/// k) is worth cutting is bounded in the groups of padding_groups, each over its own largest
/// count: a domain's needed bounds do not depend on its batch, so only the work changes.
Interval crown_needed_rows(const Graph& graph, const BoundState& state, const OpEnv& env, int p,
                           const NeededBounds& needed);

/// True when node p's intermediate bounds are its `ibp` of its inputs' `bounds`: p is a
/// monotone elementwise op (BoundOp::monotone) whose inputs all have bounds. That interval
/// is p's exact range over them, never looser than a CROWN pass from p (no rows needed).
bool bounds_from_inputs(const Graph& graph, const std::vector<std::optional<Interval>>& bounds, int p);

/// The reference bounds `[D, *shape]` with `tight` (`[D, k]`, crown_rows) put at the
/// positions each domain needs (intersected with the reference there when `intersect`); the
/// reference at the padding positions, so a domain's bounds do not depend on its batch, or
/// with `padding` the reference intersected with what was bounded there too.
Interval with_needed(const Interval& ref, const NeededBounds& needed, const Interval& tight, bool intersect = false,
                     bool padding = false);

/// Forward linear bounds (forward_forms.cpp): the input box `[D, *shape]` as forms of
/// x = centre + radius e.
LinearForms input_forms(const Interval& box);

/// Bounds of forms over e in [-1, 1]^n, `[D, *shape]`.
Interval concretise(const LinearForms& f);

/// The forms of node `id` from its inputs' `forms` (and, for an activation, its inputs'
/// `bounds`), or nullopt where an input has none, the operator has none, or its forms fail on
/// the node's shapes (ATen's error: the nodes after it then keep interval bounds).
std::optional<LinearForms> node_forms(const Graph& graph, const std::vector<std::optional<LinearForms>>& forms,
                                      const std::vector<std::optional<Interval>>& bounds, const OpEnv& env, int id);

/// `ref` intersected with the bounds of `f` (never empty: the upper end at least the lower).
Interval intersect_forms(const Interval& ref, const LinearForms& f);

/// The rows [C; -C] (or [I; -I]) over the output node.
APtr spec_rows(const Graph& graph, const at::Tensor& c, at::ScalarType dtype);

/// The rows sign * C (or sign * I) over the output node.
APtr spec_side(const Graph& graph, const at::Tensor& c, at::ScalarType dtype, double sign);

/// Adam state of one parameter tensor.
struct AdamSlot {
  at::Tensor m, v;  // undefined before the first step (zeros)
};

/// One projected Adam step (descent) on p in [0, upper] (the slopes: [0, 1]) with gradient g at step t
/// (adam.cpp: one pass over p, g, m, v on the CPU).
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
