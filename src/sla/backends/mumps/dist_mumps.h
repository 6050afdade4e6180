#pragma once
// MUMPS, the distributed multifrontal LU, on a DSparseTensor: each rank hands MUMPS its own
// rows (distributed assembled input, ICNTL(18) = 3: row, column and value of every stored
// entry in global 1-based ids), on a duplicate of the tensor's MPI communicator. The LU
// factors stay inside MUMPS and serve both A x = b and A^T x = b (ICNTL(9)), so the adjoint
// solve of dsolve's backward costs one more pair of triangular solves, no new factorisation.
// Built only with TESSERA_WITH_MUMPS.
//
//   auto lu = factorize_distributed_mumps(dA);   // collective; throws on every rank on failure
//   at::Tensor x = lu->solve(b_owned, false);     // collective; A^T x = b with true

#include <ATen/core/Tensor.h>

#include <memory>

#include "tessera/sla/dist/dsparse_tensor.h"

namespace tessera::sla::detail {

class DistDirectFactorization {
 public:
  virtual ~DistDirectFactorization() = default;
  /// x = A^{-1} b (or A^{-T} b) for b of this rank's owned rows, [owned] or [owned, k]; collective.
  virtual at::Tensor solve(const at::Tensor& b, bool transpose) = 0;
};

/// Analysis and LU factorisation of `a` (float64, general unsymmetric, SYM = 0). An error
/// reported by MUMPS (INFOG(1) < 0; INFOG(1) = -10 for a numerically singular A) throws
/// InvalidInput naming the code on every rank alike (MUMPS makes INFOG global).
std::shared_ptr<DistDirectFactorization> factorize_distributed_mumps(const DSparseTensor& a);

}  // namespace tessera::sla::detail
