#pragma once
// The vector spaces of tessera's iterative methods for vectors distributed by rows over the
// ranks: the Krylov space of dsolve (dot products summed over the ranks) and the Lanczos
// space of deigsh (block inner products summed, and a QR of a tall block distributed by
// rows: TSQR). The algorithms themselves are the single-process ones.
//
//   detail::KrylovSpace ks = distributed_krylov_space(dA);    // krylov_solve(..., &ks)
//   detail::LanczosSpace ls = distributed_lanczos_space(dA);  // block_lanczos(..., &ls)

#include "sla/backends/native/krylov.h"
#include "sla/eigsh/lanczos.h"
#include "tessera/sla/dist/dsparse_tensor.h"

namespace tessera::sla::detail {

/// Inner products <u, v> = sum_r <u_r, v_r> over the ranks of `a`'s communicator.
KrylovSpace distributed_krylov_space(const DSparseTensor& a);
/// The same over the ranks of `comm` for vectors of `global_size` entries in all.
KrylovSpace distributed_krylov_space(const std::shared_ptr<dist::Communicator>& comm, int64_t global_size);

/// Block inner products Q W summed over the ranks; QR of a block [owned, b] by TSQR (each
/// rank's R_r, all-gathered, factorised again: W = (Q_r Q'_r) R on every rank alike); the
/// owned rows of a full block.
LanczosSpace distributed_lanczos_space(const DSparseTensor& a);

}  // namespace tessera::sla::detail
