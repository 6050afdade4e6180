#pragma once
// An elementwise relaxation applied to dense rows or patch rows in one pass over A
// (AMatrix::relax's and PatchesA::relax's arithmetic without their intermediate tensors),
// for passes that record no gradient.

#include <ATen/ATen.h>

#include <optional>
#include <vector>

#include "tessera/lirpa/a_matrix.h"

namespace tessera::lirpa::detail {

/// For A [S, node...] and a relaxation (each tensor over the node, or [G, node...] with G | S:
/// row s reads group s / (S / G)): A_x = A+ d_l + A- d_u and, per row, the constant
/// sum(A+ b_l) + sum(A- b_u), on the CPU. Nothing when a gradient would be recorded, or for a
/// device, shape or dtype outside that rule, or a relaxation entry that is not finite: the caller takes the
/// general path then.
std::optional<RelaxedRows> relax_dense_rows(const at::Tensor& a, const ElementwiseRelaxation& r);

/// The same for patch rows (patches_a.h): kernel `[S, C, KH, KW]` with corners `origin`
/// `[S, 2]` over a node `[1.., C, H, W]`, the relaxation over the node or in row groups.
/// Returns the new kernel (0 at entries outside the node) and sets `bias` `[S]`; nothing
/// under the same conditions as relax_dense_rows.
std::optional<at::Tensor> relax_patch_rows(const at::Tensor& kernel, const at::Tensor& origin,
                                           const std::vector<int64_t>& node, const ElementwiseRelaxation& r,
                                           at::Tensor& bias);

}  // namespace tessera::lirpa::detail
