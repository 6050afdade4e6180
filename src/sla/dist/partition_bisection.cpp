// Recursive coordinate bisection: split the longest extent at the weighted median.

#include <ATen/ATen.h>

#include "tessera/core/error.h"
#include "tessera/sla/dist/partition.h"

namespace tessera::sla {
namespace {

// Assigns parts [first, first + parts) to the points `ids` of `coords`.
void bisect(const at::Tensor& coords, const at::Tensor& ids, int first, int parts, at::Tensor& owner) {
  if (parts == 1 || ids.numel() == 0) {
    owner.index_fill_(0, ids, first);
    return;
  }
  at::Tensor pts = coords.index_select(0, ids);
  // the dimension of largest extent
  at::Tensor extent = std::get<0>(pts.max(0)) - std::get<0>(pts.min(0));
  int64_t dim = extent.argmax().item<int64_t>();
  // left gets a share of the points proportional to its number of parts
  int left_parts = parts / 2;
  int64_t left_count = ids.numel() * left_parts / parts;
  at::Tensor order = std::get<1>(at::sort(pts.select(1, dim), /*stable=*/true, /*dim=*/0, /*descending=*/false));
  at::Tensor sorted_ids = ids.index_select(0, order);
  bisect(coords, sorted_ids.narrow(0, 0, left_count), first, left_parts, owner);
  bisect(coords, sorted_ids.narrow(0, left_count, ids.numel() - left_count), first + left_parts,
         parts - left_parts, owner);
}

}  // namespace

RowPartition RowPartition::coordinate_bisection(const at::Tensor& coords, int parts) {
  TESSERA_CHECK(coords.dim() == 2 && coords.size(1) >= 1, InvalidInput,
                "coordinates must be [rows, d], got shape ", coords.sizes());
  TESSERA_CHECK(parts > 0, InvalidInput, "a partition needs at least one part, got ", parts);
  at::Tensor owner = at::zeros({coords.size(0)}, at::kLong);
  bisect(coords.to(at::kDouble), at::arange(coords.size(0), at::kLong), 0, parts, owner);
  return from_owner(owner, parts);
}

}  // namespace tessera::sla
