#pragma once
/// @file a_matrix.h
/// Linear coefficients of bound functions with respect to one node ("A matrices").
///
/// An `AMatrix` holds S rows, each a linear function of a node's value (node shape
/// `[d1, d2, ...]`): row s maps x to sum_i A[s, i] x[i]. CROWN propagates them backwards.
/// Two forms: `DenseA` (a tensor `[S, d1, d2, ...]`) and `UnitRowsA` (signed unit rows
/// `sign_s * e_{index_s}`, e.g. the identity `[I; -I]` used for intermediate bounds) that
/// never materialises a matrix until an operator needs it dense.
///
/// @code
///   auto a = UnitRowsA::identity({50}, /*both_signs=*/true);    // rows [I; -I]
///   at::Tensor lb = a->concretize_lower(box_lower, box_upper);  // min over the box
/// @endcode

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

namespace tessera::lirpa {

class AMatrix;
using APtr = std::shared_ptr<const AMatrix>;

/// S rows of linear functions of one node's value.
class AMatrix {
 public:
  virtual ~AMatrix() = default;
  /// Number of rows S.
  virtual int64_t rows() const = 0;
  /// The node shape the rows act on (without the row dimension).
  virtual std::vector<int64_t> node_shape() const = 0;
  /// The dense tensor `[S, *node_shape]` in `dtype`.
  virtual at::Tensor dense(at::ScalarType dtype) const = 0;
  /// `[S]`: sum_i A[s, i] v[i] for a constant `v` broadcastable to node_shape.
  virtual at::Tensor contract(const at::Tensor& v) const = 0;
  /// `[S]`: min over the box l <= x <= u of A x (l, u shaped node_shape).
  virtual at::Tensor concretize_lower(const at::Tensor& l, const at::Tensor& u) const = 0;
  /// The same rows viewed on a node of another shape with the same number of elements.
  virtual APtr reshaped(const std::vector<int64_t>& shape) const = 0;
};

/// A dense tensor `[S, *node_shape]`.
class DenseA final : public AMatrix {
 public:
  explicit DenseA(at::Tensor a);
  static APtr make(at::Tensor a) { return std::make_shared<DenseA>(std::move(a)); }
  int64_t rows() const override;
  std::vector<int64_t> node_shape() const override;
  at::Tensor dense(at::ScalarType dtype) const override;
  at::Tensor contract(const at::Tensor& v) const override;
  at::Tensor concretize_lower(const at::Tensor& l, const at::Tensor& u) const override;
  APtr reshaped(const std::vector<int64_t>& shape) const override;
  const at::Tensor& tensor() const { return a_; }

 private:
  at::Tensor a_;
};

/// Rows `sign_s * e_{index_s}` over the flattened node: the identity and its subsets.
class UnitRowsA final : public AMatrix {
 public:
  /// `index`, `sign`: int64 / floating tensors of length S.
  UnitRowsA(std::vector<int64_t> shape, at::Tensor index, at::Tensor sign);
  /// Rows [I] or [I; -I] over a node of `shape`.
  static APtr identity(const std::vector<int64_t>& shape, bool both_signs);
  int64_t rows() const override;
  std::vector<int64_t> node_shape() const override { return shape_; }
  at::Tensor dense(at::ScalarType dtype) const override;
  at::Tensor contract(const at::Tensor& v) const override;
  at::Tensor concretize_lower(const at::Tensor& l, const at::Tensor& u) const override;
  APtr reshaped(const std::vector<int64_t>& shape) const override;

 private:
  std::vector<int64_t> shape_;
  at::Tensor index_;  // [S] int64 into the flattened node
  at::Tensor sign_;   // [S] +1 / -1 (double)
};

/// Sum of two A matrices over the same node (dense unless both are absent).
APtr add_a(const APtr& a, const APtr& b, at::ScalarType dtype);

}  // namespace tessera::lirpa
