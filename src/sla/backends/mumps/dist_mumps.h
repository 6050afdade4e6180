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
//
// With DistFactorOptions::determinant, MUMPS also computes det A during the factorisation
// (ICNTL(33)); inverse_entries() gives chosen entries of A^{-1} from the same factors
// (ICNTL(30), MUMPS's selected inversion), which is what log det's gradient needs.
// In a build without MUMPS, factorize_distributed_mumps throws NotCompiled.

#include <ATen/core/Tensor.h>

#include <memory>
#include <utility>

#include "tessera/sla/dist/dsparse_tensor.h"

namespace tessera::sla::detail {

struct DistFactorOptions {
  bool determinant = false;     ///< compute det A with the factors (ICNTL(33))
  bool allow_singular = false;  ///< report null pivots (null_pivots()) instead of throwing
};

class DistDirectFactorization {
 public:
  virtual ~DistDirectFactorization() = default;
  /// x = A^{-1} b (or A^{-T} b) for b of this rank's owned rows, [owned] or [owned, k]; collective.
  virtual at::Tensor solve(const at::Tensor& b, bool transpose) = 0;
  /// sign(det A) and log|det A| (options.determinant), the same on every rank; sign 0 and
  /// -inf when null pivots were found.
  virtual std::pair<double, double> slogdet() const = 0;
  /// Null pivots found by the factorisation (global).
  virtual int64_t null_pivots() const = 0;
  /// (A^{-1})_{rows[e], cols[e]} for this rank's int64 global index pairs; collective (the
  /// pairs of every rank are gathered on MUMPS's host, which computes them in one pass).
  virtual at::Tensor inverse_entries(const at::Tensor& rows, const at::Tensor& cols) = 0;
};

/// Analysis and LU factorisation of `a` (float64, general unsymmetric, SYM = 0). An error
/// reported by MUMPS (INFOG(1) < 0; INFOG(1) = -10 for a numerically singular A) throws
/// InvalidInput naming the code on every rank alike (MUMPS makes INFOG global); so do null
/// pivots unless options.allow_singular.
std::shared_ptr<DistDirectFactorization> factorize_distributed_mumps(const DSparseTensor& a,
                                                                     const DistFactorOptions& options = {});

/// Whether this build has MUMPS (TESSERA_WITH_MUMPS).
bool mumps_available();

}  // namespace tessera::sla::detail
