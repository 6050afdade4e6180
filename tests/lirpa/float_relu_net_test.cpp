// The float32 copy of a ReluNet used by the side attack's PGD: the same outputs as the
// float64 net up to float32 rounding, and input gradients of the same signs (PGD steps
// along them).

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>

#include "lirpa/verify/float_relu_net.h"
#include "lirpa/verify/relu_net.h"

namespace tessera::lirpa::detail {
namespace {

TEST(LirpaFloatReluNet, MatchesTheFloat64NetUpToRounding) {
  at::manual_seed(7);
  const std::vector<int64_t> widths{5, 50, 50, 50, 5};  // ACAS Xu-like
  ReluNet net;
  for (size_t k = 0; k + 1 < widths.size(); ++k) {
    net.w.push_back(at::randn({widths[k + 1], widths[k]}, at::kDouble) / std::sqrt(double(widths[k])));
    net.b.push_back(at::randn({widths[k + 1]}, at::kDouble) * 0.1);
  }
  FloatReluNet fast(net);
  at::Tensor x = at::rand({512, 5}, at::kDouble) * 2 - 1;
  at::Tensor y = net.forward(x), yf = fast.forward(x);
  ASSERT_EQ(yf.scalar_type(), at::kDouble);
  ASSERT_EQ(yf.sizes(), y.sizes());
  double scale = y.abs().max().item<double>();
  EXPECT_LT((yf - y).abs().max().item<double>(), 1e-5 * scale);
  EXPECT_GT((yf - y).abs().max().item<double>(), 0.0);  // computed in float32, not a float64 copy

  // d(sum_i y_i0)/dx: the same signs wherever the float64 gradient is not tiny
  at::Tensor xa = x.clone().requires_grad_(true), xb = x.clone().requires_grad_(true);
  at::Tensor ga = torch::autograd::grad({net.forward(xa).select(1, 0).sum()}, {xa})[0];
  at::Tensor gb = torch::autograd::grad({fast.forward(xb).select(1, 0).sum()}, {xb})[0];
  ASSERT_EQ(gb.scalar_type(), at::kDouble);
  at::Tensor clear = ga.abs() > 1e-4 * ga.abs().max();
  EXPECT_TRUE(ga.sign().masked_select(clear).equal(gb.sign().masked_select(clear)));
  EXPECT_LT((ga - gb).abs().max().item<double>(), 1e-5 * ga.abs().max().item<double>());
}

}  // namespace
}  // namespace tessera::lirpa::detail
