#pragma once
// The adjoint solve of an eigenvector's gradient, shared by eigsh's backward (one process)
// and deigsh's (rows over ranks): only A's product and the inner products differ.

#include <ATen/core/Tensor.h>

#include "sla/backends/native/krylov.h"

namespace tessera::sla::detail {

/// For the simple eigenpair (λ_i, v_i) among the computed `lambda` [k] and `vectors` [rows, k],
/// and g = dL/dv_i: w solving (A - λ_i I + c v_i v_i^T) w = (I - v_i v_i^T) g by MINRES
/// (c = max(1, max |λ|): the deflated matrix is nonsingular when λ_i is simple), then w ⟂ v_i;
/// dL/dA = -w v_i^T on A's pattern. `av` applies A to this process's (rank's) rows; `space`
/// takes the inner products. Throws Unsupported when λ_i is within 1e-8 c of another
/// computed eigenvalue or MINRES does not converge.
at::Tensor eigenvector_adjoint(const LinearOperator& av, const at::Tensor& lambda, const at::Tensor& vectors,
                               int64_t i, const at::Tensor& g, const KrylovSpace& space);

}  // namespace tessera::sla::detail
