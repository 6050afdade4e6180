#pragma once
/// @file mlp_builder.h
/// Builds a fully connected ReLU network from code, one layer at a time, into any store.
///
/// With a `ShardedParamStore`, each rank keeps only its block of every layer as it is made,
/// so a network too large for one process never exists whole on any rank.
///
/// @code
///   auto store = std::make_shared<ShardedParamStore>(tessera::dist::world());
///   Graph g = build_relu_mlp({784, 4096, 10}, [](int k, int64_t n_in, int64_t n_out) {
///     return std::pair{at::randn({n_out, n_in}, at::kDouble), at::zeros({n_out}, at::kDouble)};
///   }, store);
///   Graph cnn = build_relu_cnn({3, 32, 32}, {16, 32}, {2, 2}, 10, /*seed=*/1);
/// @endcode

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "tessera/lirpa/graph.h"

namespace tessera::lirpa {

/// `layer(k, n_in, n_out)` returns (W_k [n_out, n_in], b_k [n_out]); y = relu(... W_k x + b_k).
using MlpLayerFn = std::function<std::pair<at::Tensor, at::Tensor>(int, int64_t, int64_t)>;

/// Network sizes[0] -> sizes[1] -> ... -> sizes.back() with ReLU between the layers (none
/// after the last). The store receives "layer<k>/weight" (stored as W^T) and "layer<k>/bias".
Graph build_relu_mlp(const std::vector<int64_t>& sizes, const MlpLayerFn& layer, std::shared_ptr<ParamStore> store);

/// A random CNN on inputs `chw` = [C, H, W]: for each k, Conv 3x3 (pad 1, stride
/// `strides[k]`, `channels[k]` output channels, bias) and ReLU; then Flatten and Linear to
/// `outputs`. Weights normal with std 1/sqrt(fan-in), biases std 0.1, from `seed` (the same
/// network on every process). Built as ONNX and loaded, so it is what `load_onnx` makes.
Graph build_relu_cnn(const std::vector<int64_t>& chw, const std::vector<int64_t>& channels,
                     const std::vector<int64_t>& strides, int64_t outputs, uint64_t seed);

}  // namespace tessera::lirpa
