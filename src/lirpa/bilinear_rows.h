#pragma once
// alpha-CROWN's relaxation of Z = X Y (two bounded variables, per-product plane mixes, see
// ops/bilinear.cpp) applied to dense rows in one pass over the products, and its backward in
// one pass too when it is on a gradient tape: no [S, ..., n, k, m] temporaries.

#include <ATen/ATen.h>

#include <optional>

#include "tessera/lirpa/bound_op.h"

namespace tessera::lirpa::detail {

/// What the rows become: A_X `[S, B, n, k]`, A_Y `[S, B, k, m]`, the constant `[S]`.
struct BilinearRows {
  at::Tensor ax, ay, bias;
};

/// For rows A `[S, B, n, m]` over Z, the raw plane mixes `alpha` `[S, 2, B, n, k, m]` (r_l,
/// r_u; clamped to [0, 1] here, as the general path does) and the operands' bounds
/// x `[G, B, n, k]`, y `[H, B, k, m]` (G and H divide S: row s reads group s / (S / G)):
///   A_X_ik = sum_j (A+ r_l + A- (1 - r_u)) ly_kj + (A+ (1 - r_l) + A- r_u) uy_kj
///   A_Y_kj = sum_i (A+ r_l + A- r_u) lx_ik + (A+ (1 - r_l) + A- (1 - r_u)) ux_ik
///   bias   = -sum_ikj A+ r_l lx ly + A+ (1 - r_l) ux uy + A- r_u lx uy + A- (1 - r_u) ux ly
/// per row and batch entry b, on the CPU in float32 or float64; recorded as one node on the
/// gradient tape when any input requires a gradient. Nothing for other devices, dtypes or
/// shapes: the caller takes the general path then.
std::optional<BilinearRows> bilinear_matmul_rows(const at::Tensor& a, const at::Tensor& alpha, const Interval& x,
                                                 const Interval& y);

}  // namespace tessera::lirpa::detail
