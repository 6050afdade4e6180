// PairwiseDifference: d[..., i, j] = x_j - x_i over the last axis of x (T entries), a linear
// map from x [..., T] to d [..., T, T], so exact in every method:
// - IBP: d_ij in [l_j - u_i, u_j - l_i] for i != j, and d_ii = 0 exactly (x_i - x_i, which
//   interval arithmetic on two independent ends would widen to [l_i - u_i, u_i - l_i]);
// - CROWN: a row A over d reads sum_ij A_ij (x_j - x_i), so the coefficient of x_k is
//   A_x[k] = sum_i A_ik - sum_j A_kj (its column sum minus its row sum), no bias.

#include "lirpa/ops/pairwise_difference.h"

#include <ATen/ATen.h>

#include "lirpa/ops/op_util.h"

namespace tessera::lirpa::detail {

namespace {

/// The [..., T, T] tensor with its diagonal entries set to 0 (also where they are infinite).
at::Tensor zero_diagonal(const at::Tensor& d) {
  at::Tensor diagonal = at::eye(d.size(-1), d.options().dtype(at::kBool));
  return at::where(diagonal, at::zeros({}, d.options()), d);
}

}  // namespace

class PairwiseDifferenceOp final : public BoundOp {
 public:
  std::string type() const override { return "PairwiseDifference"; }

  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override {
    return x[0].unsqueeze(-2) - x[0].unsqueeze(-1);  // [.., 1, T(j)] - [.., T(i), 1]
  }

  Interval ibp(const OpEnv&, const std::vector<Interval>& x) const override {
    const at::Tensor& l = x[0].lower;
    const at::Tensor& u = x[0].upper;
    return {zero_diagonal(l.unsqueeze(-2) - u.unsqueeze(-1)), zero_diagonal(u.unsqueeze(-2) - l.unsqueeze(-1))};
  }

  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext&) const override {
    at::Tensor ad = a->dense(env.dtype);                   // [S, .., T(i), T(j)]
    return {{DenseA::make(ad.sum(-2) - ad.sum(-1))}, {}};  // A_x[k] = sum_i A_ik - sum_j A_kj
  }
};

std::shared_ptr<const BoundOp> make_pairwise_difference() {
  return std::make_shared<PairwiseDifferenceOp>();
}

}  // namespace tessera::lirpa::detail
