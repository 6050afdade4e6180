#pragma once
/// @file bounds.h
/// Bounds on a network's outputs (or linear specifications of them) over an input box.
///
/// @code
///   Graph g = load_onnx("net.onnx");
///   BoundOptions opt;  opt.method = Method::Crown;  opt.dtype = at::kDouble;
///   BoundsResult r = compute_bounds(g, box_lower, box_upper, opt);   // r.lower, r.upper
///   // with a specification C [K, n_out]: bounds of C y
///   BoundsResult s = compute_bounds(g, box_lower, box_upper, opt, c);
/// @endcode

#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "tessera/lirpa/bound_op.h"
#include "tessera/lirpa/graph.h"

namespace tessera::dist {
class Communicator;
}

namespace tessera::lirpa {

enum class Method { Ibp, Crown, AlphaCrown };

/// "ibp", "crown", "alpha-crown" <-> Method; throws InvalidInput for other names.
Method parse_method(const std::string& name);
std::string method_name(Method method);

/// alpha-CROWN options (defaults: auto_LiRPA's `CROWN-Optimized` defaults).
struct AlphaOptions {
  int iterations = 20;           ///< Adam steps
  double lr = 0.5;               ///< Adam learning rate for the slopes
  double lr_decay = 0.98;        ///< lr multiplied by this after every step
  double beta1 = 0.9;            ///< Adam first-moment decay
  double beta2 = 0.999;          ///< Adam second-moment decay
  int early_stop_patience = 10;  ///< stop after this many steps without improvement
  bool keep_best = true;         ///< return the best bound seen per specification row
  /// Optimise lower and upper bounds in separate runs, each with its own slopes (auto_LiRPA's
  /// default; tighter, twice the work); false: one run on the rows [C; -C] together.
  bool separate_sides = true;
  /// Asked before every step (when set): true stops the optimisation, which returns the
  /// best bound so far (at least CROWN's: the first pass uses CROWN's slopes). Verification
  /// passes its timeout here.
  std::function<bool()> stop;
  /// false: only the final rows' slopes are optimised; the intermediate bounds stay CROWN's
  /// (one backward pass per step instead of one per bounded node; auto_LiRPA's
  /// `fix_interm_bounds`). Not read by tensor parallelism (`--shard tp`).
  bool intermediate = true;
  /// Per specification row (`[K]`, lower side only; undefined: none): a row whose best
  /// lower bound is above its target leaves the loss (the slopes shared by all rows then
  /// serve the others), and the steps stop once every row is above. Verification passes
  /// rhs + margin: a row above it is proven. Not read by tensor parallelism.
  at::Tensor target;
  /// The final rows' parameters to start from (activation node id -> `[rows, *shape]`: an
  /// earlier run's BoundsResult::final_alpha on the same rows and box), each used where its
  /// shape agrees, CROWN's slopes elsewhere and in every intermediate pass. From a final-rows
  /// run's, a full run's first step gives that run's best bound (the intermediate bounds
  /// then start as CROWN's). Read by the lower side's run (`separate_sides`) or the run on
  /// the rows [C; -C]; not by tensor parallelism. Empty: CROWN's slopes everywhere.
  std::map<int, at::Tensor> final_start;
};

struct BoundOptions {
  Method method = Method::Crown;
  at::ScalarType dtype = at::kDouble;  ///< kFloat or kDouble
  AlphaOptions alpha;
  /// false: alpha-CROWN optimises only the lower bounds (half the work; `upper` is +inf).
  bool want_upper = true;
  /// Sharded optimisation state (`--shard fsdp+state`): with several ranks, the rows of every
  /// CROWN backward pass (their A matrices and alpha-CROWN slopes) are split across the ranks
  /// of this communicator and the bounds all-gathered; every rank calls with the same
  /// arguments and receives the same result. Null or one rank: everything local.
  std::shared_ptr<dist::Communicator> shard_rows;
  /// CROWN and alpha-CROWN: also return the intermediate bounds (BoundsResult::intermediate).
  bool keep_intermediate = false;
  /// CROWN and alpha-CROWN: bounds of activation inputs known to hold on this box (node id ->
  /// `[1, *shape]`, e.g. an earlier run's BoundsResult::intermediate), taken as they are
  /// instead of being recomputed. Null: none.
  const std::map<int, Interval>* known_intermediate = nullptr;
  /// CROWN and alpha-CROWN: each intermediate bound CROWN computes is intersected with the
  /// interval bound from the bounds before it (both sound) instead of replacing it. Tighter
  /// than auto_LiRPA's CROWN, which replaces it (so off by default: the bounds then equal
  /// auto_LiRPA's); verification turns it on.
  bool intersect_ibp = false;
};

/// Bounds per specification row (or per raw output).
struct BoundsResult {
  at::Tensor lower;  ///< [K]
  at::Tensor upper;  ///< [K]
  int iterations = 0;  ///< alpha-CROWN steps taken (the most of the two sides' runs; 0 otherwise)
  /// With BoundOptions::keep_intermediate: the bounds of every activation's input node (node
  /// id -> `[1, *shape]` in float64), CROWN's intersected with those of every alpha-CROWN
  /// step (branch and bound starts from them).
  std::map<int, Interval> intermediate;
  /// alpha-CROWN: the final rows' parameters at each row's best step (activation node id ->
  /// `[rows, *shape]`), of the lower side's run (`separate_sides`) or of the rows [C; -C];
  /// AlphaOptions::final_start starts a later run from them. Empty otherwise.
  std::map<int, at::Tensor> final_alpha;
};

/// Bounds of `c y` (c: [K, output_size]; undefined = identity) for every input x with
/// lower <= x <= upper (shaped like the input or flat).
BoundsResult compute_bounds(const Graph& graph, const at::Tensor& lower, const at::Tensor& upper,
                            const BoundOptions& options, const at::Tensor& c = {});

}  // namespace tessera::lirpa
