#pragma once
/// @file matrix_market.h
/// MatrixMarket files: `coordinate` matrices (real, integer or pattern; general, symmetric
/// or skew-symmetric) and `array` matrices (general, real or integer) for right-hand
/// sides. A malformed file throws ParseError naming the file and the line.
///
/// Symmetric storage keeps one triangle; `to_sparse(stored)` mirrors it by gathering from
/// the stored values, so gradients land on the values actually stored in the file:
///
/// @code
///   auto mm = tessera::sla::read_matrix_market("494_bus.mtx");
///   at::Tensor stored = mm.values.clone().requires_grad_();   // one value per file entry
///   tessera::sla::SparseTensor A = mm.to_sparse(stored);        // both triangles
///   auto b = tessera::sla::read_dense_matrix_market("b.mtx");   // array format: [n] or [n, k]
///   tessera::sla::write_matrix_market("copy.mtx", A);
/// @endcode

#include <ATen/core/Tensor.h>

#include <string>

#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

enum class MatrixMarketSymmetry { General, Symmetric, SkewSymmetric };
enum class MatrixMarketField { Real, Integer, Pattern };

/// The entries of a coordinate file exactly as stored (0-based indices).
struct MatrixMarketCoordinate {
  int64_t rows = 0;
  int64_t cols = 0;
  at::Tensor row;     ///< int64 [entries]
  at::Tensor col;     ///< int64 [entries]
  at::Tensor values;  ///< float64 [entries]; ones for `pattern` files
  MatrixMarketSymmetry symmetry = MatrixMarketSymmetry::General;
  MatrixMarketField field = MatrixMarketField::Real;

  /// Full-storage SparseTensor. `stored_values` ([..., entries], default `values`) replaces
  /// the file's values, e.g. with a requires_grad leaf; mirrored entries gather from it.
  SparseTensor to_sparse(const at::Tensor& stored_values = {}) const;
};

/// Reads a coordinate file; ParseError (file:line) when malformed, Unsupported for complex.
MatrixMarketCoordinate read_matrix_market(const std::string& path);
/// read_matrix_market(path).to_sparse() cast to `dtype`.
SparseTensor read_sparse_matrix_market(const std::string& path, at::ScalarType dtype = at::kDouble);
/// Reads an `array` file (or a coordinate one) as a dense float64 tensor: [rows] when it
/// has one column, [rows, cols] otherwise.
at::Tensor read_dense_matrix_market(const std::string& path);

/// Writes `a` (unbatched) as `coordinate real general`, or with `symmetric` as
/// `coordinate real symmetric` (lower triangle; `a` must be symmetric).
void write_matrix_market(const std::string& path, const SparseTensor& a, bool symmetric = false);
/// Writes a [rows] or [rows, cols] tensor as `array real general`.
void write_dense_matrix_market(const std::string& path, const at::Tensor& dense);

}  // namespace tessera::sla
