#pragma once
/// @file random_networks.h
/// Random test networks written as ONNX bytes (load with `load_onnx_bytes`): MLPs, CNNs
/// with pooling and BatchNorm, convolution chains (stride, padding, dilation, groups),
/// residual nets and attention blocks. Weights come from LibTorch's global generator
/// (`at::manual_seed` makes them reproducible). Used by the tests and by the soundness campaign.

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::lirpa {

/// MLP n_in -> hidden... -> n_out (Gemm layers), `activation` ("Relu", "Sigmoid", "Tanh")
/// between layers; weights N(0, 1/fan_in), biases N(0, 0.01).
std::string random_mlp(int64_t n_in, std::vector<int64_t> hidden, int64_t n_out, const std::string& activation);

/// CNN on [1, 2, 8, 8]: Conv(pad 1) -> BatchNorm -> Relu -> `pool` ("AveragePool" or
/// "MaxPool", 2x2) -> Conv(stride 2, pad 1) -> Relu -> Flatten -> MatMul + Add; 5 outputs.
std::string random_cnn(const std::string& pool);

/// CNN on [1, 2, 7, 7] exercising convolution-aware A rows: input normalisation (Sub, Div),
/// Conv with dilation 2 and groups 2 -> BatchNorm -> Relu -> Conv stride 2, groups 2 -> Conv
/// (no activation between) -> Relu -> Conv stride 2 whose windows miss the last row and
/// column -> Relu -> Flatten -> Gemm; 3 outputs.
std::string random_conv_chain();

/// Residual net on [1, n]: x -> fc -> relu -> fc (+ x) -> (- 0.5 relu) -> reshape -> relu
/// -> fc; 3 outputs.
std::string random_residual(int64_t n);

/// An attention block on [1, tokens * dim]: reshape to [1, T, D] tokens h; q, k, v = h Wq,
/// h Wk, h Wv; softmax(q k^T / sqrt(D)) v + h; relu(. W1 + b1) -> flatten -> Gemm; 3 outputs.
std::string random_attention(int64_t tokens, int64_t dim);

}  // namespace tessera::lirpa
