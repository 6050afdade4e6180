// Domain blocks across ranks: see domain_blocks.h.

#include <ATen/ATen.h>

#include "lirpa/bab/domain_blocks.h"
#include "lirpa/bab/relu_bab.h"
#include "tessera/dist/communicator.h"

namespace tessera::lirpa::detail {

ChildBlock child_block(const dist::Communicator* comm, int64_t children) {
  ChildBlock b{0, children, {}, false};
  if (!comm || comm->size() == 1 || children == 0) return b;
  b.counts = dist::balanced_counts(children, comm->size());  // fewer children than ranks: some 0
  b.lo = 0;
  for (int r = 0; r < comm->rank(); ++r) b.lo += b.counts[r];
  b.hi = b.lo + b.counts[comm->rank()];
  if (b.lo == b.hi) {  // an empty block: bound a copy of the last child to stay in step, keep none
    b.lo = children - 1, b.hi = children;
    b.stand_in = true;
  }
  return b;
}

at::Tensor gather_block(dist::Communicator& comm, const ChildBlock& block, const at::Tensor& t) {
  if (!block.split() || !t.defined()) return t;
  at::Tensor mine = block.stand_in ? t.slice(0, 0, 0) : t;  // a stand-in contributes no rows
  return comm.all_gather(mine.contiguous(), block.counts);  // rank order = the single-process order
}

bool on_every_rank(dist::Communicator& comm, const ChildBlock& block, bool local) {
  if (block.stand_in) local = true;  // only the real children count
  at::Tensor t = at::full({1}, local ? 1 : 0, at::kLong);
  comm.all_reduce(t, dist::ReduceOp::Min);  // logical and
  return t.item<int64_t>() == 1;
}

bool on_any_rank(dist::Communicator& comm, bool local) {
  at::Tensor t = at::full({1}, local ? 1 : 0, at::kLong);
  comm.all_reduce(t, dist::ReduceOp::Max);  // logical or
  return t.item<int64_t>() == 1;
}

}  // namespace tessera::lirpa::detail
