#pragma once
/// @file dlogdet.h
/// log det, log|det| and its sign of a matrix distributed by rows (DSparseTensor),
/// differentiable in the values: logdet() and slogdet() across ranks.
///
/// Forward: MUMPS's distributed LU (each rank hands MUMPS its own rows, as dsolve's backend
/// mumps does), which computes det A with the factors (ICNTL(33)): det = m 2^e, so
/// log|det A| = log|m| + e log 2 without overflow. Any square non-singular matrix (LU, not
/// only SPD). A singular A (null pivots) gives status Singular, sign 0 and -inf.
///
/// Backward: d log|det A| / dA_ij = (A^{-T})_ij = (A^{-1})_ji, wanted on the pattern only.
/// It is MUMPS's selected inversion (ICNTL(30): chosen entries of A^{-1} from the same
/// factors, computed with sparse right-hand sides), the distributed counterpart of the
/// one-process selected inversion (Takahashi equations on an LDU): no solve per entry and
/// no second factorisation. The wanted (j, i) pairs of every rank pass through MUMPS's host
/// (rank 0), like dsolve's b and x. The log-determinant is the same on every rank; as for
/// every distributed output, the loss is the sum of the ranks' losses, so its gradient is
/// summed over the ranks in backward. Backward of a singular A throws Unsupported.
///
/// Needs MUMPS (NotCompiled otherwise). DetOptions::backend must be Auto or Mumps.
///
/// @code
///   auto dA = tessera::sla::DSparseTensor::from_global(comm, part, A.with_values(values));
///   auto [ld, info] = tessera::sla::dlogdet(dA);   // the same scalar on every rank
///   if (comm->rank() == 0) ld.backward(); else (0 * ld).backward();
/// @endcode

#include <ATen/core/Tensor.h>

#include <utility>

#include "tessera/sla/determinant.h"
#include "tessera/sla/dist/dsparse_tensor.h"

namespace tessera::sla {

/// sign(det A) (no gradient) and log|det A| (differentiable), scalars, the same on every
/// rank; collective.
SlogdetResult dslogdet(const DSparseTensor& a, const DetOptions& options = {});
/// log det A (NaN and status NotPositiveDefinite where det A < 0); collective.
std::pair<at::Tensor, DetInfo> dlogdet(const DSparseTensor& a, const DetOptions& options = {});

}  // namespace tessera::sla
