#pragma once
// An elementwise relaxation applied to dense rows or patch rows in one pass over A
// (AMatrix::relax's and PatchesA::relax's arithmetic without their intermediate tensors);
// dense rows on a gradient tape too, with a one-pass backward (dense_relax_tape.cpp).

#include <ATen/ATen.h>

#include <array>
#include <optional>
#include <vector>

#include "tessera/lirpa/a_matrix.h"

namespace tessera::lirpa::detail {

/// The rows of a [G, N] tensor read by rows i, i + 1, ... of A [S, N] (row i reads row
/// i / per_group, per_group = S / G), one step at a time: no division per row.
template <typename T>
struct RowWalk {
  T* at;
  int64_t n, per_group, left;  // left: rows of A still reading `at`
  RowWalk(T* data, int64_t per_group, int64_t i, int64_t n)
      : at(data + (i / per_group) * n), n(n), per_group(per_group), left(per_group - i % per_group) {}
  T* next() {
    T* row = at;
    if (--left == 0) at += n, left = per_group;
    return row;
  }
};

/// For A [S, node...] and a relaxation (each tensor over the node, or [G, node...] with G | S:
/// row s reads group s / (S / G)): A_x = A+ d_l + A- d_u and, per row, the constant
/// sum(A+ b_l) + sum(A- b_u), on the CPU; on a gradient tape (A or the relaxation requiring a
/// gradient) recorded as one node whose backward is one pass too. Nothing for a device, shape
/// or dtype outside that rule, or a relaxation entry that is not finite: the caller takes the
/// general path then.
std::optional<RelaxedRows> relax_dense_rows(const at::Tensor& a, const ElementwiseRelaxation& r);

/// Records the relaxation's outputs `ax` and `bias` (computed off the tape from `a` and the
/// relaxation's tensors spread to `lines` = {dl, bl, du, bu}, each `[G, N]`) on the gradient
/// tape of `a` and `r` (dense_relax_tape.cpp).
void record_relax(const at::Tensor& a, const ElementwiseRelaxation& r, const std::array<at::Tensor, 4>& lines,
                  at::Tensor& ax, at::Tensor& bias);

/// The same for patch rows (patches_a.h): kernel `[S, C, KH, KW]` with corners `origin`
/// `[S, 2]` over a node `[1.., C, H, W]`, the relaxation over the node or in row groups.
/// Returns the new kernel (0 at entries outside the node) and sets `bias` `[S]`; nothing
/// under the same conditions as relax_dense_rows, and on a gradient tape.
std::optional<at::Tensor> relax_patch_rows(const at::Tensor& kernel, const at::Tensor& origin,
                                           const std::vector<int64_t>& node, const ElementwiseRelaxation& r,
                                           at::Tensor& bias);

}  // namespace tessera::lirpa::detail
