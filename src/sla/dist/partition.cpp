#include "tessera/sla/dist/partition.h"

#include <ATen/ATen.h>

#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"

namespace tessera::sla {

RowPartition RowPartition::contiguous(int64_t rows, int parts) {
  return from_counts(dist::balanced_counts(rows, parts));
}

RowPartition RowPartition::from_counts(const std::vector<int64_t>& counts) {
  TESSERA_CHECK(!counts.empty(), InvalidInput, "a partition needs at least one part");
  RowPartition p;
  p.parts_ = static_cast<int>(counts.size());
  p.offsets_.assign(1, 0);
  for (int64_t c : counts) {
    TESSERA_CHECK(c >= 0, InvalidInput, "negative part size ", c);
    p.offsets_.push_back(p.offsets_.back() + c);
  }
  p.rows_ = p.offsets_.back();
  return p;
}

RowPartition RowPartition::from_owner(const at::Tensor& owner, int parts) {
  TESSERA_CHECK(parts > 0, InvalidInput, "a partition needs at least one part, got ", parts);
  TESSERA_CHECK(owner.dim() == 1, InvalidInput, "owner must be 1-D, got shape ", owner.sizes());
  RowPartition p;
  p.parts_ = parts;
  p.rows_ = owner.size(0);
  p.owner_ = owner.to(at::kLong).contiguous();
  if (p.rows_ > 0) {
    TESSERA_CHECK(p.owner_.min().item<int64_t>() >= 0 && p.owner_.max().item<int64_t>() < parts,
                  InvalidInput, "owner values must lie in [0, ", parts, ")");
  }
  return p;
}

at::Tensor RowPartition::owner_of(const at::Tensor& global_rows) const {
  at::Tensor g = global_rows.to(at::kLong);
  if (g.numel() > 0) {
    TESSERA_CHECK(g.min().item<int64_t>() >= 0 && g.max().item<int64_t>() < rows_, InvalidInput,
                  "row id out of range [0, ", rows_, ")");
  }
  if (owner_.defined()) return owner_.index_select(0, g.reshape({-1})).reshape(g.sizes());
  // owner = number of block starts <= g, minus one: searchsorted on the block ends
  at::Tensor ends = at::tensor(std::vector<int64_t>(offsets_.begin() + 1, offsets_.end()), at::kLong);
  return at::searchsorted(ends, g, /*out_int32=*/false, /*right=*/true);
}

at::Tensor RowPartition::rows_of(int part) const {
  TESSERA_CHECK(part >= 0 && part < parts_, InvalidInput, "part ", part, " out of range for ",
                parts_, " parts");
  if (owner_.defined()) return at::nonzero(owner_ == part).reshape({-1});
  return at::arange(offsets_[part], offsets_[part + 1], at::kLong);
}

std::vector<int64_t> RowPartition::counts() const {
  std::vector<int64_t> counts(parts_, 0);
  if (owner_.defined()) {
    at::Tensor c = at::bincount(owner_, {}, parts_);
    for (int p = 0; p < parts_; ++p) counts[p] = c[p].item<int64_t>();
  } else {
    for (int p = 0; p < parts_; ++p) counts[p] = offsets_[p + 1] - offsets_[p];
  }
  return counts;
}

}  // namespace tessera::sla
