#pragma once
// ReLU-splitting branch and bound on the graph engine (Graph, BoundOp, AMatrix, BoundState):
// any network the bound operators support (Conv, residual Add, pooling, BatchNorm), not only
// chains of affine layers and ReLUs.
//
// A domain is the input box plus split constraints on neurons of the graph's ReLU nodes.
// Bounding a domain is the graph engine's CROWN (alpha-CROWN on request) with the limits hook
// of BoundState: each split neuron's pre-activation bounds clamped (l >= 0 active, u <= 0
// inactive), the bounds inherited from the parent intersected in, and every later
// intermediate bound recomputed with them; then split multipliers (beta) on the final rows.

#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lirpa/bab/bab.h"
#include "tessera/lirpa/graph.h"

namespace tessera::lirpa::detail {

/// One ReLU node of a graph: its id, the id of its input (the pre-activation) and its neurons.
struct GraphRelu {
  int node = 0;
  int input = 0;
  int64_t size = 0;
};

/// The ReLU nodes of `graph` (recognised by their operator's type), in topological order.
std::vector<GraphRelu> graph_relus(const Graph& graph);

/// The final rows' ReLU slopes and split multipliers of a batch of domains, per ReLU node
/// (graph_relus order) `[B, K, n_j]` (K rows per domain), or empty (none). Any slope in [0, 1]
/// and any multiplier >= 0 gives a sound bound, so a child may start from its parent's.
struct RowParams {
  std::vector<at::Tensor> alpha, beta;
  bool empty() const { return alpha.empty(); }
  RowParams select(const at::Tensor& index) const;  ///< the domains `index` (dim 0)
  int64_t bytes() const;
};

/// Sub-domains of ReLU splitting on a graph, each inside one of a few root boxes.
struct GraphDomains {
  at::Tensor xl, xu;  ///< the root boxes, [R, n_in] float64 (or [n_in]: one box)
  /// [B] long: the root box each domain lies in (its input box); undefined: box 0 for all.
  at::Tensor root;
  /// Per ReLU node (graph_relus order) [B, n_j] int8: +1 split active (z >= 0), -1 inactive
  /// (z <= 0), 0 none.
  std::vector<at::Tensor> split;
  /// Per ReLU node [B, n_j]: pre-activation bounds sound on each domain (the parent's), or
  /// empty (none).
  std::vector<at::Tensor> lower, upper;
  /// [B] long, or undefined (-1 for all): the inherited bounds of ReLU nodes 0..reuse_upto[b]
  /// are taken as they are (limited by the splits) instead of being recomputed. Sound for a
  /// child whose only new split is at ReLU node reuse_upto[b]: nothing before that node's
  /// input depends on it.
  at::Tensor reuse_upto;
  /// Where each domain's slopes and multipliers start (its parent's optimised ones), or empty:
  /// CROWN's slopes and zero multipliers.
  RowParams start;
  /// The CROWN bounds computed as padding (positions a domain does not need, rows up to its
  /// group's largest count) are intersected too: tighter, but a domain's bounds then depend on
  /// the batch it is bounded in (input splitting's boxes; never with shards).
  bool intersect_padding = false;
  /// Bounds of any node (id -> `[1, *shape]`) that hold on every domain: the incomplete
  /// stage's intermediate bounds of the problem's box (one root box), intersected into each
  /// domain's bounds like its limits; null: none.
  std::shared_ptr<const std::map<int, Interval>> root_limits;
  /// Where the final rows' relaxation parameters start (node id -> `[K, *shape]` for the K
  /// rows of the problem; optimise_beta): those of the relaxations other than ReLU's on every
  /// domain, the ReLU slopes on a domain without `start`; CROWN's where null or the shape
  /// differs.
  std::shared_ptr<const std::map<int, at::Tensor>> alpha_start;
  /// [K] long: the disjunct of each of the problem's rows (BabProblem::group), or undefined
  /// (one conjunction): which domains are verified (best_rows) and leave beta's optimisation.
  at::Tensor row_group;
  /// [B, K]: lower bounds of c y - rhs known on each domain (its parent's: a child lies inside
  /// its parent), or undefined. Each row's bound is at least this, so a disjunct proven on a
  /// parent stays proven on its children.
  at::Tensor lb_floor;
  int64_t size() const { return split.empty() ? xl.size(0) : split[0].size(0); }
  /// The input boxes of the domains `sel` ([D] long): lower and upper, [D, n_in] each.
  std::pair<at::Tensor, at::Tensor> boxes(const at::Tensor& sel) const;
};

/// The bounds of a batch of graph domains.
struct GraphBounded {
  at::Tensor lb;                   ///< [B, K] lower bounds of c y - rhs (+inf: infeasible domain)
  LayerBounds bounds;              ///< per ReLU node [B, n_j] pre-activation bounds, splits applied
  std::vector<at::Tensor> lambda;  ///< per ReLU node [B, K, n_j]: the rows' coefficients on its output
  at::Tensor a_input;              ///< [B, K, n_in]: the rows' coefficients on the input
  /// [B, K]: the bound of the pass that `lambda` and `a_input` were recorded in (CROWN's, or
  /// beta's at the end of its optimisation); at most `lb`.
  at::Tensor lb_recorded;
  /// With beta: each row's slopes and multipliers at its last step (the start's where the
  /// optimisation did not run), for the children to start from.
  RowParams params;
  int64_t bounded = 0;             ///< domains bounded (fewer than B when `stop` said so)
  int64_t bounded_here = 0;        ///< of them, those this rank bounded itself (its blocks)
};

/// Bounds every domain of `d`: CROWN (alpha-CROWN with `alpha` set: the final rows' slopes
/// optimised, lambda and a_input still from CROWN's pass) over the graph with the splits and
/// inherited bounds as limits. With `beta` set, a domain with splits that this leaves
/// unverified gets split multipliers: for any beta >= 0, c y >= c y - sum beta s z on the
/// domain (s z >= 0 there), and the CROWN bound of the right side, rows -beta s added at each
/// split ReLU's input, is maximised over beta and the final rows' ReLU slopes (alpha, from
/// `d.start` or CROWN's) by projected Adam (the best bound per row kept; the parameters of
/// the last step in `params`, and that step's coefficients in `lambda` and `a_input`); a
/// domain without splits optimises the slopes alone.
/// It makes a domain whose every unstable ReLU is split exact (LP duality) where CROWN alone
/// is not. The domains are bounded together: the graph engine's state then carries D domains
/// (every bound `[D, *shape]`, every backward pass D blocks of rows), one state for the domains
/// that reuse their parent's bounds up to the same ReLU node. `stop` (may be empty) is asked
/// before each such group and between beta steps (which then end with the bounds so far);
/// once it says true the rest are left unbounded (lb -inf, `bounded` tells how many were
/// done) and the caller must discard the batch.
/// With `shard` (`--shard fsdp+state`, several ranks, every rank calling with the same `d`),
/// each group of domains is cut into one block per rank (domain_blocks.h): each rank bounds
/// its block, with the positions of its intermediate bounds and its beta steps agreed with
/// the others, and the results are all-gathered, so every rank returns the whole batch.
/// `stop` must then be a collective that answers the same on every rank (RunClock). Not with
/// `alpha`.
GraphBounded bound_graph_domains(const Graph& graph, const std::vector<GraphRelu>& relus, const GraphDomains& d,
                                 const at::Tensor& c, const at::Tensor& rhs, const AlphaOptions* alpha = nullptr,
                                 const BetaOptions* beta = nullptr, const std::function<bool()>& stop = {},
                                 const std::shared_ptr<dist::Communicator>& shard = nullptr);

/// FSB branching on graph domains `d` bounded as `g` (rows: each domain's worst row, from
/// best_rows): of the `topk` best BaBSR candidates of each domain, the one whose worse child
/// (both children bounded with the parent's ReLU-input bounds, one final CROWN pass) is
/// best. Returns (ReLU node index, neuron) per domain, -1 where nothing is left to split;
/// undefined tensors when `stop` (asked before each candidate's batch) said so on the way.
std::pair<at::Tensor, at::Tensor> graph_fsb_choice(const Graph& graph, const std::vector<GraphRelu>& relus,
                                                  const GraphDomains& d, const GraphBounded& g, const at::Tensor& rows,
                                                  const at::Tensor& c, const at::Tensor& rhs, int topk,
                                                  const std::function<bool()>& stop = {});

/// What graph branch and bound needs from the caller (BabContext without the chain network).
struct GraphBabContext {
  const Graph& graph;
  const VerifyOptions& options;
  const RunClock& clock;
  /// Checks a candidate input against the whole property (float64 forward pass); true when
  /// it is a confirmed counterexample (the caller keeps it).
  std::function<bool(const at::Tensor&)> confirm;
  ProgressFn progress;
  std::string phase = "bab-relu";
  /// Called between batches (may be empty): the caller's own counterexample search.
  std::function<bool()> side_attack;
  /// Intermediate bounds known on the whole box (node id -> `[1, *shape]`; the incomplete
  /// stage's, compute_bounds' BoundsResult::intermediate), or null: the root domain starts
  /// from them when they cover every ReLU node's input instead of bounding them again.
  const std::map<int, Interval>* root_intermediate = nullptr;
  /// `--shard fsdp+state` with several ranks: each batch's domains are cut into one block per
  /// rank (bound_graph_domains); null: every rank bounds the whole batch.
  std::shared_ptr<dist::Communicator> state_comm = nullptr;
  /// The final rows' relaxation parameters known on the whole box for the problem's K rows
  /// (node id -> `[K, *shape]`, the incomplete stage's best), or null: every domain's
  /// parameters of the relaxations other than ReLU's start from them, and the root's ReLU
  /// slopes (GraphDomains::alpha_start).
  const std::map<int, at::Tensor>* root_alpha = nullptr;
  /// Called with every batch of domains as bounded, before any is split or dropped (may be
  /// empty): the soundness campaign checks each domain's bounds against sampled points.
  std::function<void(const GraphDomains&, const GraphBounded&)> observe = {};
  bool expired() const { return clock.expired(); }
  double elapsed() const { return clock.elapsed(); }
};

/// ReLU splitting with BaBSR or FSB branching (`bab.branching`) on any graph: batches of the
/// worst domains are split at the ReLU neuron the branching chooses, both children bounded
/// with the parent's bounds inherited and split multipliers optimised with the slopes (alpha
/// and beta on the final rows only, starting from the parent's; the intermediate bounds use
/// the splits through their clamps). Fully split domains that stay unverified are counted as
/// stuck (Exhausted).
/// `start` may give several root boxes inside the problem's box, searched together in one pool
/// (input splitting's hand-off), with pre-activation bounds of every ReLU node sound on each
/// (`layers`: graph_relus order, [R, n_j]; for a chain, its hidden layers), and a budget of
/// domains; `proven_roots` then says which roots have no open or stuck domain left.
BabOutcome graph_relu_split_bab(GraphBabContext& ctx, const BabProblem& problem, const ReluSplitStart& start = {});

}  // namespace tessera::lirpa::detail
