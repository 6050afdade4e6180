// BoxStack: see box_stack.h.

#include "lirpa/bab/box_stack.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>

namespace tessera::lirpa::detail {

BoxStack::BoxStack(int64_t n, std::vector<int64_t> widths)
    : n_(n), widths_(std::move(widths)), hidden_(std::accumulate(widths_.begin(), widths_.end(), int64_t{0})),
      data_(at::empty({1024, 3 * n + 1 + 2 * hidden_}, at::kDouble)) {}

double BoxStack::min_score() const {
  return size_ ? data_.narrow(0, 0, size_).select(1, 2 * n_).min().item<double>() : 0.0;
}

int64_t BoxStack::row_bytes() const { return 8 * (3 * n_ + 1 + 2 * hidden_); }

void BoxStack::push(const at::Tensor& rows) {
  int64_t m = rows.size(0);
  if (m == 0) return;
  if (size_ + m > data_.size(0)) {
    at::Tensor bigger = at::empty({std::max(2 * data_.size(0), size_ + m), data_.size(1)}, at::kDouble);
    bigger.narrow(0, 0, size_).copy_(data_.narrow(0, 0, size_));
    data_ = bigger;
  }
  at::Tensor order = std::get<1>(rows.select(1, 2 * n_).sort(0, /*descending=*/true));
  data_.narrow(0, size_, m).copy_(rows.index_select(0, order));
  size_ += m;
}

at::Tensor BoxStack::pop(int64_t b) {
  b = std::min(b, size_);
  size_ -= b;
  return data_.narrow(0, size_, b).clone();
}

at::Tensor BoxStack::pop_lowest(int64_t b) {
  b = std::min(b, size_);
  at::Tensor live = data_.narrow(0, 0, size_);
  at::Tensor take = std::get<1>(live.select(1, 2 * n_).topk(b, 0, /*largest=*/false));
  at::Tensor keep = at::ones({size_}, at::kBool).index_fill_(0, take, false);
  at::Tensor out = live.index_select(0, take);
  at::Tensor rest = live.index_select(0, at::nonzero(keep).reshape({-1}));
  size_ = rest.size(0);
  data_.narrow(0, 0, size_).copy_(rest);
  return out;
}

LayerBounds BoxStack::layers(const at::Tensor& rows) const {
  LayerBounds lb;
  for (int64_t k = 0, col = 3 * n_ + 1; k < static_cast<int64_t>(widths_.size()); col += widths_[k++]) {
    lb.lower.push_back(rows.narrow(1, col, widths_[k]));
    lb.upper.push_back(rows.narrow(1, col + hidden_, widths_[k]));
  }
  return lb;
}

at::Tensor BoxStack::worst_centres(int64_t m) const {
  m = std::min(m, size_);
  at::Tensor rows = data_.narrow(0, size_ - m, m);
  return (xl(rows) + xu(rows)) / 2;
}

}  // namespace tessera::lirpa::detail
