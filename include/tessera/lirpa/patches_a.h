#pragma once
/// @file patches_a.h
/// Convolution-aware A matrices: each row is a small kernel over a window of the node.
///
/// A node of shape `[1, ..., 1, C, H, W]` (leading dims of size 1) and S rows, row s being
/// the kernel `K[s]` (`[C, KH, KW]`) placed with its top-left corner at `(y_s, x_s)`:
/// row s maps x to sum_{c, i, j} K[s, c, i, j] x[c, y_s + i, x_s + j]. Window entries that
/// fall outside `[0, H) x [0, W)` (a convolution's padding) multiply zeros and are ignored.
/// Unit rows at a convolution's output become such patches of its kernel, and each further
/// convolution grows them by its transposed convolution, so a CNN's intermediate bounds never
/// build the dense `[S, C*H*W]` matrices (the memory and time of CROWN on CNNs).
///
/// @code
///   // rows e_(c, y, x) at a conv output, pulled back through the conv:
///   APtr rows = UnitRowsA::identity({1, 16, 8, 8}, true);
///   APtr ax = rows->through_conv(w, geometry, {1, 3, 16, 16}, at::kDouble);  // a PatchesA
///   at::Tensor lb = ax->concretize_lower(l, u);                              // [S]
/// @endcode

#include <ATen/core/Tensor.h>

#include <vector>

#include "tessera/lirpa/a_matrix.h"

namespace tessera::lirpa {

class PatchesA final : public AMatrix {
 public:
  /// `kernel` `[S, C, KH, KW]`; `origin` `[S, 2]` int64 (window row and column of each row's
  /// top-left corner, possibly outside the node); `shape` the node shape `[1.., C, H, W]`.
  PatchesA(std::vector<int64_t> shape, at::Tensor kernel, at::Tensor origin);
  int64_t rows() const override { return kernel_.size(0); }
  std::vector<int64_t> node_shape() const override { return shape_; }
  at::Tensor dense(at::ScalarType dtype) const override;
  at::Tensor contract(const at::Tensor& v) const override;
  at::Tensor concretize_lower(const at::Tensor& l, const at::Tensor& u) const override;
  APtr reshaped(const std::vector<int64_t>& shape) const override;
  RelaxedRows relax(const ElementwiseRelaxation& r, at::ScalarType dtype) const override;
  APtr through_conv(const at::Tensor& w, const Conv2dGeometry& g, const std::vector<int64_t>& in_shape,
                    at::ScalarType dtype) const override;
  /// d + these rows for dense rows d `[S, *node_shape]` (in d's dtype), added into d itself
  /// when nobody else holds it (held_alone), else into a copy.
  at::Tensor plus(at::Tensor d) const;
  const at::Tensor& kernel() const { return kernel_; }
  const at::Tensor& origin() const { return origin_; }

  /// True when a window holds fewer positions than the node's H x W: then the patches are
  /// smaller than the dense rows (a window as large as the node is worth making dense).
  bool smaller_than_dense() const;

  /// True when rows over `shape` can be patches (`[1.., C, H, W]` with at least C, H, W).
  static bool fits(const std::vector<int64_t>& shape);

 private:
  /// Windows `[S, C, KH, KW]` of `t` (zero outside the node): `t` shaped like the node (or
  /// broadcastable to it), or `[G, *node_shape]` in row groups (a_matrix.h).
  at::Tensor windows(const at::Tensor& t) const;
  /// The kernel with the entries outside the node set to zero.
  at::Tensor masked_kernel() const;
  /// True when the rows can be added into `d` in place: on the CPU, float or double, off a
  /// gradient tape.
  bool adds_in_place(const at::Tensor& d) const;
  /// Adds the rows into `out` `[S, *node_shape]` (contiguous, adds_in_place) in place.
  void add_into(at::Tensor& out) const;
  /// Per row, sum K v - |K| r over its window inside the node (`r` optional) in one pass, off a
  /// gradient tape on the CPU; undefined elsewhere (the caller takes the windows' path).
  at::Tensor fused_window_dots(const at::Tensor& v, const at::Tensor& r) const;

  std::vector<int64_t> shape_;
  int64_t c_, h_, w_;
  at::Tensor kernel_;  // [S, C, KH, KW]
  at::Tensor origin_;  // [S, 2] int64
  int64_t pad_[4];     // zero padding top, bottom, left, right that holds every window
};

/// a + b as patches when each is a PatchesA or unit rows over the same `[1.., C, H, W]` node
/// with the same rows, and b's window sits at the same offset from a's in every row (a
/// residual block's two paths): the two kernels added over the union of their windows, into
/// the kernel whose window is the union when nobody else holds it (a and b are released
/// then). nullptr otherwise, a and b untouched (the caller adds the dense tensors).
APtr add_patches(APtr& a, APtr& b, at::ScalarType dtype);

}  // namespace tessera::lirpa
