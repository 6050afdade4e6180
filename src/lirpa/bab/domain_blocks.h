#pragma once
// A batch of branch-and-bound domains cut into one contiguous block per rank
// (`--shard fsdp+state`): each rank bounds its block, the results are all-gathered in rank
// order (the single-process order), and every decision is then taken on the whole batch,
// the same on every rank. Weight gathers are collectives, so every rank must run the same
// passes: a rank without domains of its own stands in with a copy of the last one, and the
// choices a pass depends on are agreed between the ranks (these helpers).

#include <ATen/core/Tensor.h>

#include <vector>

namespace tessera::dist {
class Communicator;
}

namespace tessera::lirpa::detail {

/// The domains [lo, hi) of a batch that this rank bounds.
struct ChildBlock {
  int64_t lo = 0, hi = 0;
  std::vector<int64_t> counts;  ///< domains per rank; empty: not split (every rank bounds all)
  /// This rank's share is empty (fewer domains than ranks): it bounds a copy of the last
  /// domain only to make the same collectives (weight gathers) as the others, and keeps none.
  bool stand_in = false;
  bool split() const { return !counts.empty(); }
  int64_t size() const { return hi - lo; }
};

/// Contiguous balanced blocks of `children` over the ranks of `comm` (rank r: counts[r]
/// domains from sum_{q<r} counts[q]); not split without a communicator or with one rank.
ChildBlock child_block(const dist::Communicator* comm, int64_t children);

/// Every rank's rows of `t` (its block) concatenated in rank order: the whole batch in the
/// single-process order. `t` itself when the batch is not split or `t` is undefined (a
/// collective otherwise: every rank calls it with the same sequence of tensors).
at::Tensor gather_block(dist::Communicator& comm, const ChildBlock& block, const at::Tensor& t);

/// Whether `local` holds on every rank that has domains (a collective).
bool on_every_rank(dist::Communicator& comm, const ChildBlock& block, bool local);

/// Whether `local` holds on some rank (a collective).
bool on_any_rank(dist::Communicator& comm, bool local);

}  // namespace tessera::lirpa::detail
