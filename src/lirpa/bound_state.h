#pragma once
// BoundState: everything one bound computation produces and consumes, keyed by node id
// (intermediate bounds, optimisable slopes). Operators never hold any of it.

#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "tessera/lirpa/bound_op.h"

namespace tessera::dist {
class Communicator;
}

namespace tessera::lirpa::detail {

struct BoundState {
  explicit BoundState(size_t nodes) : bounds(nodes) {}
  /// Bounds of each node's value, `[D, *shape]`, where computed: one per domain (branch and
  /// bound bounds D sub-domains in one pass; D = 1 otherwise). Every backward pass from a node
  /// then carries D blocks of rows, domain-major, and reads these bounds as row groups
  /// (a_matrix.h).
  std::vector<std::optional<Interval>> bounds;
  /// The number of domains D (the input bounds' leading size).
  int64_t domains() const { return bounds.empty() || !bounds[0] ? 1 : bounds[0]->lower.size(0); }
  /// alpha-CROWN slopes keyed by (start node of the backward pass, activation node), for
  /// the rows bounded from that start node, `[S, *shape]`.
  std::map<std::pair<int, int>, at::Tensor> alpha;
  /// Ranks that split the rows of every intermediate backward pass between them (each
  /// keeps its block's A matrices and slopes; the bounds are all-gathered); null: all here.
  /// Only with one domain: the rows of several domains stay whole on every rank.
  std::shared_ptr<dist::Communicator> shard_rows;
  /// Ranks that each bound their own domains of one branch-and-bound batch (`fsdp+state`):
  /// the positions whose intermediate bounds are computed are then the union over the ranks,
  /// so every rank runs the same backward passes (weight gathers are collectives); null: none.
  std::shared_ptr<dist::Communicator> shard_domains;
  /// With `shard_domains`: the domains of the whole batch on all ranks. The intermediate
  /// passes' row chunks are sized for them, so every rank cuts the same chunks as one process
  /// would (and as the others: a collective each) with 1/P of the rows in each.
  int64_t batch_domains = 0;
  /// Branch and bound's domain constraints: bounds, `[D, *shape]`, that every intermediate
  /// bound computed for a node is intersected with (a split ReLU's input clamped to l >= 0 or
  /// u <= 0, bounds inherited from the parent domain). Empty or nullopt: none.
  std::vector<std::optional<Interval>> limits;
  /// Every intermediate bound that CROWN computes is intersected with the reference bound
  /// (interval arithmetic from the bounds before it) instead of replacing it: both are sound,
  /// the intersection is tighter. Off, CROWN's bounds are auto_LiRPA's.
  bool intersect_reference = false;
  /// crown_intermediate's reference bounds are also intersected with forward linear bounds
  /// over the input box (BoundOp::forward_forms; worth it for inputs of few dimensions):
  /// fewer ReLU inputs cross zero, so fewer need CROWN rows.
  bool forward_forms = false;
  /// crown_intermediate also intersects the CROWN bounds of the positions it bounds only as
  /// padding (a domain's bounds then depend on its batch).
  bool intersect_padding = false;
  /// When set, crown_lower stores the rows that reach each node id keyed here (rows over the
  /// node's value; id 0: the rows over the input), for branching heuristics and vertices.
  std::map<int, APtr>* record = nullptr;
  /// When set, crown_lower adds these dense rows `[S, *shape]` to the rows reaching each keyed
  /// node (beta-CROWN: -beta s on the input of a ReLU split with sign s).
  const std::map<int, at::Tensor>* extra_rows = nullptr;
};

/// The element-wise `or` of a bool tensor over the ranks of `comm` (a collective: the same
/// shape on every rank).
at::Tensor any_rank(dist::Communicator& comm, const at::Tensor& flags);

/// `b` with every NaN lower end made -inf and every NaN upper end +inf: a NaN (inf - inf,
/// 0 * inf where a bound overflowed) proves nothing, and a comparison with it must never pass
/// for a proof.
Interval without_nan(const Interval& b);

/// The state restricted to the domains `keep` (their bounds and limits, with the state's
/// reference options); no slopes, records, extra rows or shards.
BoundState select_domains(const BoundState& state, const at::Tensor& keep);

/// The state with its bounds and limits in `dtype` (float32 bounds are rounded: only for
/// steps whose result a float64 pass checks); no slopes, records, extra rows or shards.
BoundState with_dtype(const BoundState& state, at::ScalarType dtype);

/// `b` intersected with the limits of `node` in `state` (`b` itself when it has none).
Interval limited(const BoundState& state, int node, Interval b);

/// This rank's block [begin, end) of `rows` rows split over the ranks of `shard_rows`, and
/// every rank's count: blocks of ceil(rows / P) rows rounded up to a multiple of 16, so each
/// block starts where it would in one product over all rows (the BLAS kernels then round
/// every row as in the whole product). Not split (every rank [0, rows)) with one rank, or
/// when a block would be empty (too few rows to be worth splitting).
struct RowBlock {
  int64_t begin = 0, end = 0;
  std::vector<int64_t> counts;
  bool split = false;
};
RowBlock row_block(int64_t rows, const std::shared_ptr<dist::Communicator>& shard_rows);

}  // namespace tessera::lirpa::detail
