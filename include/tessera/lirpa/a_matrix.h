#pragma once
/// @file a_matrix.h
/// Linear coefficients of bound functions with respect to one node ("A matrices").
///
/// An `AMatrix` holds S rows, each a linear function of a node's value (node shape
/// `[d1, d2, ...]`): row s maps x to sum_i A[s, i] x[i]. CROWN propagates them backwards.
/// Three forms: `DenseA` (a tensor `[S, d1, d2, ...]`), `UnitRowsA` (signed unit rows
/// `sign_s * e_{index_s}`, e.g. the identity `[I; -I]` used for intermediate bounds) that
/// never materialises a matrix until an operator needs it dense, and `PatchesA`
/// (patches_a.h: one small kernel per row over a window of a `[C, H, W]` node, what rows
/// become behind convolutions). Operators act on rows through the virtual methods
/// (`relax`, `through_conv`, ...); a form without a cheaper way falls back to the dense one.
///
/// Row groups: a tensor that rows read per node position (a relaxation's lines, the box of
/// `concretize_lower`) is either shaped like the node (shared by every row) or carries a
/// leading group dimension G that divides S: row s reads entry s / (S / G). G = 1 is shared,
/// G = S one entry per row (alpha-CROWN's slopes), and between them one entry per domain of
/// branch and bound, whose rows lie in contiguous blocks of S / G (domain-major).
///
/// @code
///   auto a = UnitRowsA::identity({50}, /*both_signs=*/true);    // rows [I; -I]
///   at::Tensor lb = a->concretize_lower(box_lower, box_upper);  // min over the box
/// @endcode

#include <ATen/core/Tensor.h>

#include <array>
#include <memory>
#include <vector>

namespace tessera::lirpa {

class AMatrix;
using APtr = std::shared_ptr<const AMatrix>;

/// An elementwise linear relaxation lower_d x + lower_b <= f(x) <= upper_d x + upper_b of a
/// node; each tensor is `[G, *node_shape]` in row groups (G = 1 shared by the rows, G = S per
/// row, or per domain), and the biases may be undefined (zero).
struct ElementwiseRelaxation {
  at::Tensor lower_d, lower_b, upper_d, upper_b;
};

/// Rows after an elementwise relaxation: new rows over the same node and a constant `[S]`.
struct RelaxedRows {
  APtr a;
  at::Tensor bias;
};

/// A 2-D convolution y = conv(x, w) (ONNX layout, symmetric padding) over the last three
/// dimensions of its input node.
struct Conv2dGeometry {
  std::vector<int64_t> stride{1, 1}, pad{0, 0}, dilation{1, 1};
  int64_t groups = 1;
};

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
  /// `[S]`: min over the box l <= x <= u of A x (l, u shaped node_shape, or `[G, *node_shape]`
  /// in row groups: one box per domain).
  virtual at::Tensor concretize_lower(const at::Tensor& l, const at::Tensor& u) const = 0;
  /// The same rows viewed on a node of another shape with the same number of elements.
  virtual APtr reshaped(const std::vector<int64_t>& shape) const = 0;
  /// For a lower bound of A y with y = f(x) relaxed by `r`: rows A_x = A+ lower_d + A- upper_d
  /// and bias sum_i (A+ lower_b + A- upper_b). Default: on the dense tensor.
  virtual RelaxedRows relax(const ElementwiseRelaxation& r, at::ScalarType dtype) const;
  /// Rows of y = conv(x, w) pulled back to x (`in_shape`): A_x = conv^T(A_y), the bias left
  /// to the caller. Default: transposed convolution of the dense tensor.
  virtual APtr through_conv(const at::Tensor& w, const Conv2dGeometry& g, const std::vector<int64_t>& in_shape,
                            at::ScalarType dtype) const;
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

/// Rows `sign_s * e_{index_s}` over the flattened node: the identity and its subsets (the
/// coefficient `sign_s` is any number once an elementwise relaxation has scaled the rows).
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
  /// Stays unit rows: coefficient sign_s d[index_s] with the line chosen by its sign.
  RelaxedRows relax(const ElementwiseRelaxation& r, at::ScalarType dtype) const override;
  /// Unit rows at a convolution's output become patches of its kernel (no dense matrix).
  APtr through_conv(const at::Tensor& w, const Conv2dGeometry& g, const std::vector<int64_t>& in_shape,
                    at::ScalarType dtype) const override;
  /// The same rows as 1x1 patches (a PatchesA), or nullptr when the node is not `[1.., C, H, W]`.
  APtr as_patches(at::ScalarType dtype) const;

 private:
  std::vector<int64_t> shape_;
  /// Channel, row and column `[S]` of each row's position on a `[.., C, H, W]` node.
  std::array<at::Tensor, 3> positions() const;
  /// Entry of each row of `t` (`[1 | S, *shape]` or broadcastable to shape) at index_s.
  at::Tensor pick(const at::Tensor& t) const;
  at::Tensor index_;  // [S] int64 into the flattened node
  at::Tensor sign_;   // [S] coefficients (+1 / -1 before any relaxation)
};

/// Sum of two A matrices over the same node: patches when both are patches or unit rows whose
/// windows sit at the same offset from each other in every row (add_patches), else dense.
/// Both are taken: a dense tensor or kernel that nobody else holds (off a gradient tape) is
/// added into in place instead of copied; one held elsewhere is left as it was.
APtr add_a(APtr a, APtr b, at::ScalarType dtype);

/// True when `t` is the only handle to its tensor and storage and records no gradient: an
/// in-place update cannot be seen by anyone else.
bool held_alone(const at::Tensor& t);

/// The number of row groups G of `t` read by `rows` rows over a node of `node_dims`
/// dimensions: 1 when `t` has no leading dimension, else its first size (checked to divide
/// `rows`).
int64_t row_groups(const at::Tensor& t, size_t node_dims, int64_t rows);

/// `t` (`[G, ...]` in row groups) with one entry per row, `[rows, ...]`: t[s / (rows / G)].
at::Tensor per_row(const at::Tensor& t, int64_t rows);

/// Elementwise a * t for rows `a` `[S, *node_shape]` and `t` in row groups (or node-shaped).
at::Tensor times_grouped(const at::Tensor& a, const at::Tensor& t);

}  // namespace tessera::lirpa
