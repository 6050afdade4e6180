#pragma once
/// @file eigen_csr.h
/// Zero-copy views of a CsrMatrix as Eigen sparse matrices (internal).
///
/// The CSR arrays of A are, read column-major, the CSC arrays of A^T; so the same three
/// arrays give Eigen either A (RowMajor view) or A^T (ColMajor view) without a copy.

#include <Eigen/SparseCore>

#include <cstdint>

#include "tessera/sla/backends/direct_backend.h"

namespace tessera::sla::backends::detail {

using EigenColMajor = Eigen::SparseMatrix<double, Eigen::ColMajor, int64_t>;
using EigenRowMajor = Eigen::SparseMatrix<double, Eigen::RowMajor, int64_t>;

/// A as a row-major Eigen matrix.
inline Eigen::Map<const EigenRowMajor> eigen_view(const CsrMatrix& a) {
  return {a.rows, a.cols, a.values.numel(), a.row_ptr.data_ptr<int64_t>(),
          a.col_idx.data_ptr<int64_t>(), a.values.data_ptr<double>()};
}

/// A^T as a column-major Eigen matrix (same arrays).
inline Eigen::Map<const EigenColMajor> eigen_transposed_view(const CsrMatrix& a) {
  return {a.cols, a.rows, a.values.numel(), a.row_ptr.data_ptr<int64_t>(),
          a.col_idx.data_ptr<int64_t>(), a.values.data_ptr<double>()};
}

}  // namespace tessera::sla::backends::detail
