#pragma once
// beta-CROWN on the final rows of graph branch-and-bound domains (graph_relu_split.cpp's
// bounding step): split multipliers optimised with the final rows' slopes.

#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <vector>

#include "lirpa/bab/graph_bab.h"
#include "lirpa/propagation.h"

namespace tessera::lirpa::detail {

/// `[n, *shape of node id]`: n rows (or domains) over node `id`.
std::vector<int64_t> lead_shape(const Graph& graph, int id, int64_t n);

/// The coefficients of optimise_beta's last pass of the final rows.
struct LastPass {
  /// The rows reaching each node whose id the caller put in as a key (BoundState::record),
  /// over the domains `domains` only.
  std::map<int, APtr> rows;
  at::Tensor domains;  ///< [m] long: positions among optimise_beta's D of the domains in that pass
  at::Tensor lb;       ///< [m, K]: that pass's lower bounds of c y - rhs
  bool taken = false;  ///< false: no pass ran (stopped before the first step, or nothing to optimise)
};

/// The best lower bounds [D, K] of c y - rhs over the split multipliers and the final rows'
/// slopes of D domains (intermediate bounds fixed in `state`; `rows`: K rows per domain,
/// domain-major), at least `lb`. With `shard` (each rank its own domains), the ReLU nodes
/// with splits and the end of the optimisation are agreed between the ranks, so each takes
/// the same steps (collectives) as the others. The slopes and multipliers start from `start`
/// (per ReLU node [D, K, n_j]; empty: CROWN's slopes, zero multipliers); with `end_params`,
/// each row's parameters at its last step are returned there (where its domain was verified,
/// or where the optimisation stopped): the children continue from them as Adam would have.
/// Not each row's best step: that mixes steps and left ACAS Xu 1_1 prop_5's hand-offs 11,228
/// domains against 10,017 (bench/history/2026-12-02-graph-hand-off-inherit.md). Without
/// splits, the slopes alone are optimised. The free parameters of the other relaxations
/// (curves, products) are optimised too (not in `start` or `end_params`), each domain's from
/// `alpha_start` (node id -> `[K, *shape]`, the same for every domain) where its shape
/// agrees, else from CROWN's; `alpha_start` also starts the ReLU slopes when `start` is empty.
/// With `last`, the rows' coefficients of the last pass are kept there (the pass of
/// `end_params` for every domain still open at the end: a domain leaves only once verified).
/// `row_group` (GraphDomains::row_group): the rows' disjuncts, which say when a domain is
/// verified (every disjunct has a positive row; undefined: some row positive). With
/// `end_params` and `end_other`, the other relaxations' parameters at each row's last step go
/// there (node id -> `[D K, *shape]`), for record_at.
at::Tensor optimise_beta(const Graph& graph, BoundState& state, const OpEnv& env, const std::vector<GraphRelu>& relus,
                         const std::vector<at::Tensor>& split, const APtr& rows, const at::Tensor& rhs, at::Tensor lb,
                         const BetaOptions& o, const std::function<bool()>& stop, dist::Communicator* shard,
                         const RowParams& start = {}, RowParams* end_params = nullptr, LastPass* last = nullptr,
                         const std::map<int, at::Tensor>* alpha_start = nullptr,
                         const at::Tensor& row_group = {}, std::map<int, at::Tensor>* end_other = nullptr);

/// One CROWN pass of the final rows `rows` of D domains at the slopes and split multipliers
/// `params` (where optimise_beta took no step: per ReLU node [D, K, n_j], undefined slopes for nodes
/// without any; nodes past the end of `params` without either), recording the rows'
/// coefficients at the nodes of `record` (for branching and vertex candidates), and the other
/// relaxations' parameters `other` (optimise_beta's `end_other`; null: CROWN's). Returns the
/// rows' lower bounds of c y ([D K], before rhs): the bound of those coefficients.
at::Tensor record_at(const Graph& graph, BoundState& state, const OpEnv& env, const std::vector<GraphRelu>& relus,
               const std::vector<at::Tensor>& split, const APtr& rows, const RowParams& params,
               std::map<int, APtr>& record, const std::map<int, at::Tensor>* other = nullptr);

}  // namespace tessera::lirpa::detail
