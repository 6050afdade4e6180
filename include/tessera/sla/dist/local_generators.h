#pragma once
/// @file local_generators.h
/// Rows of the Poisson matrices built directly by the rank that owns them, so that no
/// process ever holds the global matrix (the construction used at scale).
///
/// @code
///   auto part = tessera::sla::RowPartition::contiguous(n * n, comm->size());
///   at::Tensor mine = part.rows_of(comm->rank());
///   auto rows = tessera::sla::poisson2d_rows(n, mine);        // [owned x n^2], global columns
///   auto A = tessera::sla::DSparseTensor::from_local_rows(comm, part, rows);
/// @endcode

#include <ATen/core/Tensor.h>

#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

/// Rows `global_rows` (int64, ascending) of the 5-point 2D Poisson matrix on an n x n
/// grid (diagonal 4, neighbours -1, Dirichlet), as a [rows x n^2] CSR with global columns.
SparseTensor poisson2d_rows(int64_t n, const at::Tensor& global_rows, at::ScalarType dtype = at::kDouble);

/// Rows of the 7-point 3D Poisson matrix on an n x n x n grid (diagonal 6).
SparseTensor poisson3d_rows(int64_t n, const at::Tensor& global_rows, at::ScalarType dtype = at::kDouble);

}  // namespace tessera::sla
