#pragma once
// hypre's BoomerAMG across the ranks of a DSparseTensor: each rank hands hypre its own rows
// (no gather), as a ParCSR matrix on a duplicate of the tensor's MPI communicator. hypre
// wants every rank to own one contiguous range of ids; the rows of rank r become the ids
// offset_r .. offset_r + owned_r - 1 in their local (ascending global) order, so any
// RowPartition (contiguous, METIS, bisection) maps onto hypre without moving data: the hypre
// id of a halo column arrives by one halo exchange of the owners' ids.
// Built only with TESSERA_WITH_HYPRE.

#include "sla/backends/native/krylov.h"
#include "tessera/sla/dist/dsparse_tensor.h"

namespace tessera::sla::detail {

/// z = one BoomerAMG V-cycle on A (or on A^T when `transpose`) applied to r, for vectors
/// of this rank's owned rows; every application is collective. Set up here, once
/// (collective); the hypre objects live as long as the returned operator.
LinearOperator make_distributed_boomeramg(const DSparseTensor& a, bool transpose);

}  // namespace tessera::sla::detail
