#pragma once
// ReluNet: a chain network x -> affine -> ReLU -> ... -> affine, as explicit float64 weight
// matrices, extracted from a Graph by probing the affine segments between its ReLUs.
// Branch and bound works on this form, batched over domains.

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

#include "tessera/lirpa/graph.h"

namespace tessera::lirpa::detail {

struct ReluNet {
  /// z_{k+1} = W[k] h_k + b[k]; h_0 = x, h_k = relu(z_k) for 1 <= k < L, output z_L.
  std::vector<at::Tensor> w;  ///< [n_{k+1}, n_k] float64
  std::vector<at::Tensor> b;  ///< [n_{k+1}] float64
  int layers() const { return static_cast<int>(w.size()); }
  int64_t width(int k) const { return k == 0 ? w[0].size(1) : w[k - 1].size(0); }
  /// Outputs `[N, n_out]` for inputs `[N, n_in]` (float64; differentiable).
  at::Tensor forward(const at::Tensor& x) const;
};

/// The ReluNet form of `graph`, or nothing (with `why` set) when the graph is not a chain
/// of affine operators and ReLUs. Each segment's affinity is checked on random points.
std::optional<ReluNet> extract_relu_net(const Graph& graph, std::string* why = nullptr);

}  // namespace tessera::lirpa::detail
