#pragma once
// An elementwise relaxation applied to dense rows in one pass over A (AMatrix::relax's
// arithmetic without its intermediate tensors), for passes that record no gradient.

#include <ATen/ATen.h>

#include <optional>

#include "tessera/lirpa/a_matrix.h"

namespace tessera::lirpa::detail {

/// For A [S, node...] and a relaxation (each tensor over the node, or [G, node...] with G | S:
/// row s reads group s / (S / G)): A_x = A+ d_l + A- d_u and, per row, the constant
/// sum(A+ b_l) + sum(A- b_u), on the CPU. Nothing when a gradient would be recorded, or for a
/// device, shape or dtype outside that rule, or a relaxation entry that is not finite: the caller takes the
/// general path then.
std::optional<RelaxedRows> relax_dense_rows(const at::Tensor& a, const ElementwiseRelaxation& r);

}  // namespace tessera::lirpa::detail
