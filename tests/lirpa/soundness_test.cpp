// Soundness by sampling: 10^4 points of random boxes must lie inside every bound.

#include "random_nets.h"

namespace tessera::lirpa::testing {
namespace {

at::Tensor box_center(int64_t n) { return at::randn({n}, at::kDouble) * 0.5; }

TEST(LirpaSoundness, ReluMlps) {
  at::manual_seed(1);
  for (int trial = 0; trial < 4; ++trial) {
    Graph g = load_onnx_bytes(random_mlp(5, {16, 16, 8}, 4, "Relu"));
    at::Tensor c = box_center(5), r = at::rand({5}, at::kDouble) * (trial + 1) * 0.3;
    expect_sound(g, c - r, c + r, 10000);
  }
}

TEST(LirpaSoundness, ReluMlpFloat32) {
  at::manual_seed(2);
  Graph g = load_onnx_bytes(random_mlp(6, {20, 20}, 3, "Relu"));
  at::Tensor c = box_center(6), r = at::full({6}, 0.5, at::kDouble);
  expect_sound(g, c - r, c + r, 10000, at::kFloat, 1e-5);
}

TEST(LirpaSoundness, SigmoidAndTanhMlps) {
  at::manual_seed(3);
  for (const char* act : {"Sigmoid", "Tanh"}) {
    for (double w : {0.1, 1.0, 4.0}) {
      Graph g = load_onnx_bytes(random_mlp(4, {12, 12}, 3, act));
      at::Tensor c = box_center(4), r = at::full({4}, w, at::kDouble);
      expect_sound(g, c - r, c + r, 10000);
    }
  }
}

TEST(LirpaSoundness, CnnWithAveragePool) {
  at::manual_seed(4);
  Graph g = load_onnx_bytes(random_cnn("AveragePool"));
  at::Tensor c = at::randn({128}, at::kDouble) * 0.5, r = at::full({128}, 0.1, at::kDouble);
  expect_sound(g, c - r, c + r, 10000);
}

TEST(LirpaSoundness, CnnWithMaxPool) {
  at::manual_seed(5);
  Graph g = load_onnx_bytes(random_cnn("MaxPool"));
  at::Tensor c = at::randn({128}, at::kDouble) * 0.5, r = at::full({128}, 0.1, at::kDouble);
  expect_sound(g, c - r, c + r, 10000);
}

TEST(LirpaSoundness, ConvChainsWithPatches) {
  // stride, padding, dilation, groups, conv after conv: the rows behind convolutions are patches
  at::manual_seed(7);
  for (int trial = 0; trial < 2; ++trial) {
    Graph g = load_onnx_bytes(random_conv_chain());
    at::Tensor c = at::randn({98}, at::kDouble) * 0.5, r = at::full({98}, 0.1 * (trial + 1), at::kDouble);
    expect_sound(g, c - r, c + r, 10000);
  }
}

TEST(LirpaSoundness, ResidualNets) {
  at::manual_seed(6);
  for (int trial = 0; trial < 3; ++trial) {
    Graph g = load_onnx_bytes(random_residual(8));
    at::Tensor c = box_center(8), r = at::rand({8}, at::kDouble) * 0.5;
    expect_sound(g, c - r, c + r, 10000);
  }
}

}  // namespace
}  // namespace tessera::lirpa::testing
