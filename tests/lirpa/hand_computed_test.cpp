// Bounds of tiny networks worked out by hand.

#include <ATen/ATen.h>
#include <cmath>
#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/onnx_builder.h"

namespace tessera::lirpa {
namespace {

// x in [-1, 1]^2,  z = W1 x + b1 with W1 = [[1, 1], [1, -1]], b1 = [0.5, 0],  h = relu(z),
// y = h1 + h2.
//   z1 = x1 + x2 + 0.5 in [-1.5, 2.5],  z2 = x1 - x2 in [-2, 2]   (both unstable)
// IBP:   h1 in [0, 2.5], h2 in [0, 2]  =>  y in [0, 4.5].
// CROWN: upper lines h <= u/(u-l) (z - l):
//          h1 <= 0.625 (z1 + 1.5) = 0.625 z1 + 0.9375,  h2 <= 0.5 (z2 + 2) = 0.5 z2 + 1
//        y <= 0.625 (x1 + x2 + 0.5) + 0.9375 + 0.5 (x1 - x2) + 1 = 1.125 x1 + 0.125 x2 + 2.25
//          => upper = 1.125 + 0.125 + 2.25 = 3.5
//        adaptive lower slopes: z1: u = 2.5 > -l = 1.5 -> 1; z2: u = 2 = -l -> 0
//        y >= z1 + 0 = x1 + x2 + 0.5  =>  lower = -1.5
// alpha-CROWN: y >= a z1 with a in [0, 1]: min over the box is -1.5 a, best a = 0 => lower 0;
//        the upper bound only uses upper lines, so it stays 3.5.
// (true range: y = relu(x1 + x2 + 0.5) + relu(x1 - x2) in [0, 2.5 + ...]: sampled below)
std::string tiny_net() {
  OnnxBuilder b("x", {1, 2});
  auto w1 = b.constant("w1", at::tensor({1.0, 1.0, 1.0, -1.0}, at::kDouble).reshape({2, 2}));
  auto b1 = b.constant("b1", at::tensor({0.5, 0.0}, at::kDouble));
  auto z = b.node("Gemm", {b.input(), w1, b1}, {OnnxAttr::integer("transB", 1)});
  auto h = b.node("Relu", {z});
  auto w2 = b.constant("w2", at::tensor({1.0, 1.0}, at::kDouble).reshape({2, 1}));
  b.set_output(b.node("MatMul", {h, w2}));
  return b.bytes();
}

BoundsResult run(const Graph& g, Method m) {
  BoundOptions o;
  o.method = m;
  return compute_bounds(g, -at::ones({2}, at::kDouble), at::ones({2}, at::kDouble), o);
}

TEST(LirpaHandComputed, IbpOfTinyRelu) {
  Graph g = load_onnx_bytes(tiny_net());
  auto r = run(g, Method::Ibp);
  EXPECT_DOUBLE_EQ(r.lower.item<double>(), 0.0);
  EXPECT_DOUBLE_EQ(r.upper.item<double>(), 4.5);
}

TEST(LirpaHandComputed, CrownOfTinyRelu) {
  Graph g = load_onnx_bytes(tiny_net());
  auto r = run(g, Method::Crown);
  EXPECT_NEAR(r.lower.item<double>(), -1.5, 1e-12);
  EXPECT_NEAR(r.upper.item<double>(), 3.5, 1e-12);
}

TEST(LirpaHandComputed, AlphaCrownOfTinyRelu) {
  Graph g = load_onnx_bytes(tiny_net());
  auto r = run(g, Method::AlphaCrown);
  EXPECT_NEAR(r.lower.item<double>(), 0.0, 1e-9);
  EXPECT_NEAR(r.upper.item<double>(), 3.5, 1e-12);
  EXPECT_GT(r.iterations, 0);
}

// The stop test ends alpha-CROWN before its first step: CROWN's lower bound (-1.5) is
// returned; lower bounds only (verification's setting): the same 0.0, upper +inf.
TEST(LirpaHandComputed, AlphaCrownStopsAndLowerOnly) {
  Graph g = load_onnx_bytes(tiny_net());
  BoundOptions o;
  o.method = Method::AlphaCrown;
  o.alpha.stop = [] { return true; };
  auto lo = -at::ones({2}, at::kDouble), hi = at::ones({2}, at::kDouble);
  auto stopped = compute_bounds(g, lo, hi, o);
  EXPECT_NEAR(stopped.lower.item<double>(), -1.5, 1e-12);
  EXPECT_EQ(stopped.iterations, 0);
  o.alpha.stop = nullptr;
  o.want_upper = false;
  auto lower_only = compute_bounds(g, lo, hi, o);
  EXPECT_NEAR(lower_only.lower.item<double>(), 0.0, 1e-9);
  EXPECT_TRUE(std::isinf(lower_only.upper.item<double>()));
  EXPECT_GT(lower_only.iterations, 0);
}

// A specification row c = [2] on the same net: bounds of 2y are twice those of y; and a
// negative row -y has bounds [-3.5, 1.5] by CROWN.
TEST(LirpaHandComputed, CrownWithSpecificationRows) {
  Graph g = load_onnx_bytes(tiny_net());
  BoundOptions o;
  o.method = Method::Crown;
  auto r = compute_bounds(g, -at::ones({2}, at::kDouble), at::ones({2}, at::kDouble), o,
                          at::tensor({2.0, -1.0}, at::kDouble).reshape({2, 1}));
  EXPECT_NEAR(r.lower[0].item<double>(), -3.0, 1e-12);
  EXPECT_NEAR(r.upper[0].item<double>(), 7.0, 1e-12);
  EXPECT_NEAR(r.lower[1].item<double>(), -3.5, 1e-12);
  EXPECT_NEAR(r.upper[1].item<double>(), 1.5, 1e-12);
}

// Sigmoid on [0, 2] (concave part): lower = chord, upper = tangent at the midpoint 1.
// y = sigmoid(x) with x in [0, 2]: CROWN lower = min of the chord = sigmoid(0) = 0.5,
// upper = max of the tangent at 1 over [0, 2] = s(1) + s'(1) (2 - 1) where
// s(1) = 0.7310585786, s'(1) = s(1)(1 - s(1)) = 0.1966119332  =>  0.9276705118.
TEST(LirpaHandComputed, SigmoidConcaveRelaxation) {
  OnnxBuilder b("x", {1});
  b.set_output(b.node("Sigmoid", {b.input()}));
  Graph g = load_onnx_bytes(b.bytes());
  BoundOptions o;
  o.method = Method::Crown;
  auto r = compute_bounds(g, at::zeros({1}, at::kDouble), at::full({1}, 2.0, at::kDouble), o);
  EXPECT_NEAR(r.lower.item<double>(), 0.5, 1e-12);
  EXPECT_NEAR(r.upper.item<double>(), 0.7310585786300049 + 0.19661193324148185, 1e-12);
}

TEST(LirpaHandComputed, BadBoxesAreRejected) {
  Graph g = load_onnx_bytes(tiny_net());
  BoundOptions o;
  EXPECT_THROW(compute_bounds(g, at::zeros({3}, at::kDouble), at::ones({3}, at::kDouble), o), DimensionMismatch);
  EXPECT_THROW(compute_bounds(g, at::ones({2}, at::kDouble), at::zeros({2}, at::kDouble), o), InvalidInput);
  at::Tensor nan = at::full({2}, NAN, at::kDouble);
  EXPECT_THROW(compute_bounds(g, nan, at::ones({2}, at::kDouble), o), InvalidInput);
  EXPECT_THROW(compute_bounds(g, -at::ones({2}, at::kDouble), at::ones({2}, at::kDouble), o,
                              at::ones({1, 3}, at::kDouble)),
               DimensionMismatch);
}

}  // namespace
}  // namespace tessera::lirpa
