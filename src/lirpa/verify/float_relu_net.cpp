// FloatReluNet; see float_relu_net.h.

#include "lirpa/verify/float_relu_net.h"

#include <ATen/ATen.h>

namespace tessera::lirpa::detail {

FloatReluNet::FloatReluNet(const ReluNet& net) {
  for (int k = 0; k < net.layers(); ++k) {
    wt.push_back(net.w[k].to(at::kFloat).t().contiguous());
    b.push_back(net.b[k].to(at::kFloat));
  }
}

at::Tensor FloatReluNet::forward(const at::Tensor& x) const {
  at::Tensor h = x.to(at::kFloat);
  for (size_t k = 0; k < wt.size(); ++k) {
    h = at::addmm(b[k], h, wt[k]);  // z = h W^T + b
    if (k + 1 < wt.size()) h = h.clamp_min(0);
  }
  return h.to(at::kDouble);
}

}  // namespace tessera::lirpa::detail
