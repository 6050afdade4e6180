#pragma once
// FloatReluNet: a float32 copy of a whole ReluNet, for counterexample search only. PGD
// proposes points and the graph's float64 forward pass confirms them, so the search may run
// in float32, which halves its cost (bench/RESULTS.md, session 11).

#include <ATen/core/Tensor.h>

#include <vector>

#include "lirpa/verify/relu_net.h"

namespace tessera::lirpa::detail {

struct FloatReluNet {
  std::vector<at::Tensor> wt, b;  ///< W[k]^T [n_k, n_{k+1}] and b[k], float32

  /// Copies every layer of `net` (whole: gathered once when sharded).
  explicit FloatReluNet(const ReluNet& net);
  /// float64 outputs [N, n_out] of float64 inputs [N, n_in], computed in float32; differentiable.
  at::Tensor forward(const at::Tensor& x) const;
};

}  // namespace tessera::lirpa::detail
