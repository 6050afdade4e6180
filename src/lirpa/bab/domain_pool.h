#pragma once
// A pool of sub-domains stored as tensors with a common first dimension (one row per
// domain) and a score; pop() removes the domains with the lowest scores.

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

namespace tessera::lirpa::detail {

class TensorPool {
 public:
  int64_t size() const { return score_.defined() ? score_.size(0) : 0; }
  const at::Tensor& score() const { return score_; }
  const std::vector<at::Tensor>& fields() const { return fields_; }

  /// Appends domains: one tensor per field, each with `score.size(0)` rows.
  void push(const std::vector<at::Tensor>& fields, const at::Tensor& score) {
    if (score.size(0) == 0) return;
    if (size() == 0) {
      fields_ = fields;
      score_ = score;
      return;
    }
    for (size_t i = 0; i < fields_.size(); ++i) fields_[i] = at::cat({fields_[i], fields[i]});
    score_ = at::cat({score_, score});
  }

  /// Replaces field `i` by an empty `[size, 0]` tensor of its type (its rows no longer kept);
  /// later pushes must give `[n, 0]` for it too.
  void clear_field(size_t i) {
    if (size() > 0) fields_[i] = at::empty({size(), 0}, fields_[i].options());
  }

  /// Removes the `b` domains with the lowest scores; returns their fields and scores.
  std::pair<std::vector<at::Tensor>, at::Tensor> pop(int64_t b) {
    b = std::min(b, size());
    at::Tensor take = std::get<1>(score_.topk(b, 0, /*largest=*/false, /*sorted=*/true));
    at::Tensor keep = at::ones({size()}, at::kBool).index_fill_(0, take, false);
    at::Tensor rest = at::nonzero(keep).reshape({-1});
    std::vector<at::Tensor> out;
    for (auto& f : fields_) {
      out.push_back(f.index_select(0, take));
      f = f.index_select(0, rest);
    }
    at::Tensor s = score_.index_select(0, take);
    score_ = score_.index_select(0, rest);
    return {out, s};
  }

 private:
  std::vector<at::Tensor> fields_;
  at::Tensor score_;
};

}  // namespace tessera::lirpa::detail
