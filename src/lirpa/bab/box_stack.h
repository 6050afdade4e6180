#pragma once
// Input splitting's pool: open boxes with their score (best row's lower bound), smear scores
// and hidden layers' bounds, as rows of one growable tensor [capacity, 3n + 1 + 2H] (H hidden
// neurons): xl, xu, score, smear, then each layer's lower bounds, then each layer's upper
// bounds. A stack (the most recently pushed, worst-bounded rows on top: depth first).

#include <ATen/core/Tensor.h>

#include <vector>

#include "lirpa/bab/layer_bounds.h"

namespace tessera::lirpa::detail {

class BoxStack {
 public:
  /// Boxes of n inputs, hidden layers of the given widths.
  BoxStack(int64_t n, std::vector<int64_t> widths);
  int64_t size() const { return size_; }
  double min_score() const;
  /// Bytes of one row (one open box).
  int64_t row_bytes() const;

  /// Pushes rows [m, 3n + 1 + 2H], sorted so that the lowest score is popped first.
  void push(const at::Tensor& rows);
  /// Removes and returns the last `b` rows.
  at::Tensor pop(int64_t b);
  /// Removes and returns the `b` rows of lowest score (best first), keeping the others' order.
  at::Tensor pop_lowest(int64_t b);

  at::Tensor xl(const at::Tensor& rows) const { return rows.narrow(1, 0, n_); }
  at::Tensor xu(const at::Tensor& rows) const { return rows.narrow(1, n_, n_); }
  at::Tensor score(const at::Tensor& rows) const { return rows.select(1, 2 * n_); }
  at::Tensor smear(const at::Tensor& rows) const { return rows.narrow(1, 2 * n_ + 1, n_); }
  /// The boxes' hidden-layer bounds (views into `rows`).
  LayerBounds layers(const at::Tensor& rows) const;
  /// The worst `m` boxes' centres (PGD starts).
  at::Tensor worst_centres(int64_t m) const;

 private:
  int64_t n_;
  std::vector<int64_t> widths_;
  int64_t hidden_, size_ = 0;
  at::Tensor data_;
};

}  // namespace tessera::lirpa::detail
