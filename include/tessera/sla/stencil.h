#pragma once
/// @file stencil.h
/// Matrix-free solves of constant-coefficient stencil operators. A StencilMatrix holds the
/// value of each of its (at most 8) diagonals and one byte per row saying which diagonals
/// the row stores — 1 byte per row against 12 per stored entry (plus the row pointer) in
/// CSR, 64 bytes per row for the 5-point Laplacian. Products, the AMG set-up (which reads the
/// rows from the stencil) and the Krylov loop run on it without ever forming the CSR.
///
/// solve(StencilMatrix, b) is the forward solve of solve(SparseTensor, b) for the CSR it
/// stands for, on the native Krylov backend: the same hierarchy, iterates and result bit for
/// bit (tests/sla/stencil_test.cpp), without autograd. For 2D Poisson with AMG-CG it needs
/// about 133 bytes per unknown in all by the MemoryLedger (the mask, b, x, CG's r, p, q, z, the
/// hierarchy and the cycle's vectors; bench/RESULTS.md, `tessera bench scale --matrix-free`).
///
/// @code
///   auto A = tessera::sla::poisson2d_stencil(4096);          // 16.8M rows, 16.8 MB
///   tessera::sla::SolveOptions opts;
///   opts.method = tessera::sla::Method::CG;
///   opts.preconditioner = tessera::sla::Preconditioner::AMG;
///   opts.rtol = 1e-6;
///   auto [x, info] = tessera::sla::solve(A, at::rand({A.rows()}, at::kDouble), opts);
/// @endcode

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "tessera/sla/preconditioners.h"
#include "tessera/sla/solve_options.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

/// A square matrix whose diagonals (offset = col - row) each hold one value.
struct StencilMatrix {
  std::vector<int64_t> offsets;  ///< ascending, distinct, at most 8
  std::vector<double> coeffs;    ///< the value on each diagonal
  at::Tensor mask;               ///< uint8 [rows] (CPU): bit d set when row i stores diagonal d

  int64_t rows() const { return mask.defined() ? mask.numel() : 0; }
  /// Stored entries (the set bits of the mask).
  int64_t nnz() const;
  /// The CSR matrix it stands for (float64, int32 indices where they fit).
  SparseTensor to_sparse() const;
};

/// poisson2d(n) as a StencilMatrix (built directly: no CSR at any size).
StencilMatrix poisson2d_stencil(int64_t n);

/// poisson3d(n) (the 7-point Laplacian, Dirichlet, n^3 rows) as a StencilMatrix.
StencilMatrix poisson3d_stencil(int64_t n);

/// The stencil form of batch element 0 of a float64 CPU matrix: at most 8 diagonals, each with
/// one value (bitwise); nullopt otherwise.
std::optional<StencilMatrix> stencil_of(const SparseTensor& a);

/// Solves A x = b for b [rows] (float64, CPU; no autograd: b must not require grad) with the
/// native Krylov methods (options.backend Auto or Native; method Auto: CG when A is
/// symmetric, else GMRES) and preconditioner None, Jacobi or AMG. Throws Unsupported for
/// other backends and preconditioners, DimensionMismatch / InvalidInput as solve() does.
std::pair<at::Tensor, SolveInfo> solve(const StencilMatrix& a, const at::Tensor& b, const SolveOptions& options = {});

/// setup_preconditioner (preconditioners.h) for a StencilMatrix (AMG only).
PreconditionerSetup setup_preconditioner(const StencilMatrix& a, const SolveOptions& options);

}  // namespace tessera::sla
