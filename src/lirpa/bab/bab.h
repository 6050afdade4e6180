#pragma once
// Branch and bound on one output conjunction over one input box: prove that no input of the
// box satisfies every row c_k y <= rhs_k, i.e. max_k (c_k y - rhs_k) > 0 everywhere. ReLU
// splitting also takes several conjunctions (disjuncts) at once: min_g max_{k in g} > 0.

#include <ATen/core/Tensor.h>

#include <chrono>
#include <functional>
#include <memory>

#include "lirpa/attack/pgd.h"
#include "lirpa/bab/layer_bounds.h"
#include "lirpa/verify/run_clock.h"
#include "tessera/lirpa/verify.h"

namespace tessera::dist {
class Communicator;
}

namespace tessera::lirpa::detail {

using Clock = std::chrono::steady_clock;

struct BabProblem {
  at::Tensor xl, xu;  ///< [n_in] float64
  at::Tensor c, rhs;  ///< [K, n_out], [K] float64
  /// [K] long: the disjunct (0, 1, ...) of each row, the rows of one disjunct a conjunction;
  /// the problem is proven where every disjunct has a row with a positive lower bound.
  /// Undefined: all rows are one conjunction. Graph ReLU splitting only.
  at::Tensor group;
};

enum class BabStatus { Proven, Falsified, Timeout, Exhausted };

struct BabOutcome {
  BabStatus status = BabStatus::Exhausted;
  int64_t visited = 0;   ///< sub-domains bounded
  double lower = 0;      ///< global lower bound reached
  std::string reason;    ///< for Exhausted
  /// ReLU splitting from several root boxes (ReluSplitStart::xl): [R] bool, the roots with no
  /// open or stuck domain left (undefined when falsified).
  at::Tensor proven_roots;
  /// ReLU splitting on the graph: false once the pool dropped the slopes and multipliers the
  /// children start from (beyond `bab.inherit_max_bytes`).
  bool inherited = true;
};

/// What branch and bound needs from the caller.
struct Bounded;  // a batch of bounded boxes (input_split_steps.h)

struct BabContext {
  /// The network's forward pass, float64 outputs [N, n_out] for inputs [N, n_in],
  /// differentiable (the PGD inside open boxes): the graph's, or any cheaper equal one.
  BatchFn forward;
  const VerifyOptions& options;
  const RunClock& clock;  ///< the run's deadline, agreed between ranks
  /// Checks a candidate input against the whole property with the real graph; true when
  /// it is a confirmed counterexample (the caller keeps it).
  std::function<bool(const at::Tensor&)> confirm;
  ProgressFn progress;
  std::string phase;
  /// `--shard fsdp+state` with several ranks: ReLU splitting cuts each batch's children into
  /// one block per rank and gathers the results (null: every rank bounds the whole batch).
  std::shared_ptr<dist::Communicator> state_comm = nullptr;
  /// Called between batches (may be empty): a counterexample search of the caller's own that
  /// decides itself whether to run now; true when it found a confirmed counterexample.
  std::function<bool()> side_attack;
  /// The network as a graph: input splitting hands its boxes to ReLU splitting on it
  /// (graph_relu_split_bab).
  const Graph& graph;
  /// Input splitting calls it with every batch of boxes as bounded (the root, then each
  /// batch's children: boxes [B, n] and their bounds), before any is dropped or split (the
  /// soundness campaign checks them); may be empty.
  std::function<void(const at::Tensor& xl, const at::Tensor& xu, const Bounded& bounded)> observe = {};
  /// Input splitting stops (Exhausted) once this many boxes are bounded; 0: no limit.
  int64_t max_visited = 0;
  bool expired() const { return clock.expired(); }
  double elapsed() const { return clock.elapsed(); }
  /// Rank 0's value of a measurement that a decision depends on (batch resizing).
  double agreed(double local) const { return clock.agreed(local); }
};

/// Input splitting (low-dimensional inputs): bisect boxes along the dimension chosen by
/// the smear heuristic |a_i| (u_i - l_i) of the best row's linear bound.
BabOutcome input_split_bab(BabContext& ctx, const BabProblem& problem);

/// Where a ReLU-splitting search starts, and how far it may go (input splitting hands boxes
/// over to it: relu_split_boxes).
struct ReluSplitStart {
  /// Root boxes [R, n] inside the problem's box, searched together in one pool (their domains
  /// share batches); undefined: the problem's box.
  at::Tensor xl, xu;
  const LayerBounds* layers = nullptr;  ///< hidden-layer bounds sound on each root box ([R, n_k]), or null
  int64_t max_visited = 0;              ///< stop (Exhausted) once this many domains are bounded; 0: no limit
};

/// Input splitting's hand-off: ReLU splitting on the context's graph (graph_relu_split_bab,
/// without PGD or progress reports) inside the boxes [xl_b, xu_b] ([B, n]) from their layer
/// bounds (row b of `layers`), all in one pool, up to `max_visited` domains in all. On a small box only a few
/// ReLUs are unstable, and splitting them removes the relaxation that bisecting the box only
/// shrinks.
struct BoxHandOff {
  at::Tensor proven;       ///< [B] bool
  bool falsified = false;  ///< a counterexample was confirmed
  int64_t visited = 0;     ///< domains bounded
};
BoxHandOff relu_split_boxes(BabContext& ctx, const BabProblem& problem, const at::Tensor& xl, const at::Tensor& xu,
                            const LayerBounds& layers, int64_t max_visited);

/// For each domain (lb: [B, K] lower bounds of c_k y - rhs_k), the row that decides it and the
/// domain's bound: the row with the largest bound (one conjunction, `group` undefined), or
/// with several disjuncts (`group` [K]: BabProblem::group) the best row of the worst
/// disjunct, min_g max_{k in g} lb_k. With y's values instead of bounds, the bound is how far
/// the point is from satisfying some disjunct (<= 0: it does).
std::pair<at::Tensor, at::Tensor> best_rows(const at::Tensor& lb, const at::Tensor& group = {});

/// Smear heuristic: the input dimension with the largest |a_i| (u_i - l_i) for each domain's
/// best row (a: [B, K, n], rows: [B]) -> [B] long.
at::Tensor smear_dimension(const at::Tensor& a, const at::Tensor& rows, const at::Tensor& xl, const at::Tensor& xu);

/// Splits boxes [B, n] along dims [B] at their midpoints: children [2B, n], first the lower
/// halves then the upper halves. The two halves share the midpoint, so they cover the box.
std::pair<at::Tensor, at::Tensor> bisect(const at::Tensor& xl, const at::Tensor& xu, const at::Tensor& dims);

/// Widths of boxes [B, n] relative to the root box's (root_width [n]): (u_i - l_i) / (U_i - L_i).
at::Tensor relative_widths(const at::Tensor& root_width, const at::Tensor& xl, const at::Tensor& xu);

/// Input splitting's guard against slicing a box ever thinner along a few dimensions: [B, n]
/// bool, true where the relative width is below `ratio` times the box's largest relative width
/// (the relatively widest dimension is never thin). Thin dimensions are no split candidates.
at::Tensor thin_dimensions(const at::Tensor& root_width, const at::Tensor& xl, const at::Tensor& xu, double ratio);

/// [B, n] bool, true where a box is narrower than `point_width` times the root box's width
/// (a point, up to rounding): bisecting it makes two copies of the box, so it is no split
/// candidate in either input-splitting search (root dimensions of width 0 are points too).
at::Tensor point_dimensions(const at::Tensor& root_width, const at::Tensor& xl, const at::Tensor& xu,
                            double point_width = 1e-9);

/// [B, n] bool, true where a box's smear (|a_i| (u_i - l_i) of its best row) is below `ratio`
/// times its largest: bisecting such a dimension leaves the box's bound as it is (the largest
/// is never negligible), so the two-candidate search does not try it.
at::Tensor negligible_smear(const at::Tensor& smear, double ratio);

/// The vertex of each box minimising the linear function a (best row): x_i = l_i if a_i > 0 else u_i.
at::Tensor minimising_vertex(const at::Tensor& a, const at::Tensor& rows, const at::Tensor& xl, const at::Tensor& xu);

/// Batched PGD on the conjunction's violation max_k (c_k y - rhs_k) inside each box
/// [xl_b, xu_b] ([B, n]) from `start` ([B, n], clipped into the boxes), `steps` signed-gradient
/// steps of decaying size; returns each box's best point [B, n] (stops early once one has
/// value <= 0). The points are candidates only: the caller confirms them.
at::Tensor box_attack(const BatchFn& f, const at::Tensor& xl, const at::Tensor& xu, const at::Tensor& start,
                      const at::Tensor& c, const at::Tensor& rhs, int steps);

}  // namespace tessera::lirpa::detail
