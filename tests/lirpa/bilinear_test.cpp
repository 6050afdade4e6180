// Products of two bounded variables (Mul, MatMul): bounds contain sampled outputs for every
// method, CROWN equals the McCormick planes worked out by hand in float64, and alpha-CROWN's
// mix of the planes reaches the product's range on one product.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/onnx_builder.h"

namespace tessera::lirpa {
namespace {

at::Tensor dbl(std::vector<double> v, std::vector<int64_t> shape) {
  return at::tensor(v, at::kDouble).reshape(shape);
}

/// Every one of `n` uniform samples of the box has outputs inside [lower, upper].
void expect_contains_samples(const Graph& g, const at::Tensor& lo, const at::Tensor& hi, const BoundsResult& r,
                             int64_t n, const std::string& what) {
  at::manual_seed(7);
  at::Tensor t = at::rand({n, lo.numel()}, at::kDouble);
  t.slice(0, 0, n / 4).round_();  // a quarter on the box's corners, where the planes are loosest
  at::Tensor x = lo + (hi - lo) * t;
  std::vector<int64_t> shape{n};
  for (int64_t d : g.input_shape()) shape.push_back(d);
  at::Tensor y = g.forward(x.reshape(shape), at::kDouble).reshape({n, -1});
  const double tol = 1e-9;
  EXPECT_TRUE((y >= r.lower.reshape({1, -1}) - tol).all().item<bool>())
      << what << ": a sample below the lower bound by " << (r.lower.reshape({1, -1}) - y).max().item<double>();
  EXPECT_TRUE((y <= r.upper.reshape({1, -1}) + tol).all().item<bool>())
      << what << ": a sample above the upper bound by " << (y - r.upper.reshape({1, -1})).max().item<double>();
}

BoundsResult bounds(const Graph& g, const at::Tensor& lo, const at::Tensor& hi, Method m) {
  BoundOptions o;
  o.method = m;
  return compute_bounds(g, lo, hi, o);
}

// x [1, 4] -> a = x W1 + b1, b = x W2 + b2 (both [1, 6]) -> z = a * b -> relu -> y = z W3.
std::string mul_net() {
  at::manual_seed(1);
  OnnxBuilder b("x", {1, 4});
  auto a = b.node("Gemm", {b.input(), b.constant("w1", at::randn({4, 6}, at::kDouble)),
                           b.constant("b1", at::randn({6}, at::kDouble))});
  auto c = b.node("Gemm", {b.input(), b.constant("w2", at::randn({4, 6}, at::kDouble)),
                           b.constant("b2", at::randn({6}, at::kDouble))});
  auto z = b.node("Relu", {b.node("Mul", {a, c})});
  b.set_output(b.node("MatMul", {z, b.constant("w3", at::randn({6, 3}, at::kDouble))}));
  return b.bytes();
}

// x [1, 12] -> X = reshape(x W1, [1, 2, 3, 2]), Y = reshape(x W2, [1, 2, 2, 3]) ->
// Z = X Y [1, 2, 3, 3] -> y = flatten(Z) W3.
std::string matmul_net() {
  at::manual_seed(2);
  OnnxBuilder b("x", {1, 12});
  auto xa = b.node("MatMul", {b.input(), b.constant("w1", at::randn({12, 12}, at::kDouble))});
  auto xb = b.node("MatMul", {b.input(), b.constant("w2", at::randn({12, 12}, at::kDouble))});
  auto a = b.node("Reshape", {xa, b.constant("s1", at::tensor({1, 2, 3, 2}, at::kLong))});
  auto c = b.node("Reshape", {xb, b.constant("s2", at::tensor({1, 2, 2, 3}, at::kLong))});
  auto z = b.node("Reshape", {b.node("MatMul", {a, c}), b.constant("s3", at::tensor({1, 18}, at::kLong))});
  b.set_output(b.node("MatMul", {z, b.constant("w3", at::randn({18, 4}, at::kDouble))}));
  return b.bytes();
}

TEST(LirpaBilinear, MulBoundsContainSamples) {
  Graph g = load_onnx_bytes(mul_net());
  at::Tensor lo = dbl({-0.3, 0.1, -0.5, 0.2}, {4}), hi = dbl({0.2, 0.4, 0.1, 0.3}, {4});
  for (Method m : {Method::Ibp, Method::Crown, Method::AlphaCrown})
    expect_contains_samples(g, lo, hi, bounds(g, lo, hi, m), 10000, "Mul " + method_name(m));
}

TEST(LirpaBilinear, MatMulBoundsContainSamples) {
  Graph g = load_onnx_bytes(matmul_net());
  at::manual_seed(3);
  at::Tensor c = at::randn({12}, at::kDouble), lo = c - 0.1, hi = c + 0.1;
  for (Method m : {Method::Ibp, Method::Crown, Method::AlphaCrown})
    expect_contains_samples(g, lo, hi, bounds(g, lo, hi, m), 10000, "MatMul " + method_name(m));
}

// z = x1 * x2 with x1 in [-1, 2], x2 in [-1, 3] (x = x1, y = x2 in the planes):
//   IBP: corners 1, -3, -2, 6  =>  [-3, 6].
//   CROWN lower plane z >= ly x + lx y - lx ly = -x1 - x2 - 1, least at (2, 3): -6.
//   CROWN upper plane z <= uy x + lx y - lx uy = 3 x1 - x2 + 3, greatest at (2, -1): 10.
std::string product_of_inputs() {
  OnnxBuilder b("x", {1, 2});
  auto x1 = b.node("Gather", {b.input(), b.constant("i0", at::tensor({0}, at::kLong))}, {OnnxAttr::integer("axis", 1)});
  auto x2 = b.node("Gather", {b.input(), b.constant("i1", at::tensor({1}, at::kLong))}, {OnnxAttr::integer("axis", 1)});
  b.set_output(b.node("Mul", {x1, x2}));
  return b.bytes();
}

TEST(LirpaBilinear, MulOfTwoInputsByHand) {
  Graph g = load_onnx_bytes(product_of_inputs());
  at::Tensor lo = dbl({-1, -1}, {2}), hi = dbl({2, 3}, {2});
  BoundsResult ibp = bounds(g, lo, hi, Method::Ibp);
  EXPECT_DOUBLE_EQ(ibp.lower.item<double>(), -3.0);
  EXPECT_DOUBLE_EQ(ibp.upper.item<double>(), 6.0);
  BoundsResult crown = bounds(g, lo, hi, Method::Crown);
  EXPECT_DOUBLE_EQ(crown.lower.item<double>(), -6.0);
  EXPECT_DOUBLE_EQ(crown.upper.item<double>(), 10.0);
}

// alpha-CROWN mixes the two planes of each side: r (-x1 - x2 - 1) + (1 - r)(3 x1 + 2 x2 - 6)
// has the least value -3 over the box for r in [2/3, 3/4] (= min x1 x2, at (-1, 3)); the upper
// mix r (3 x1 - x2 + 3) + (1 - r)(-x1 + 2 x2 + 2) has the greatest value 6 (= max x1 x2) for
// r in [1/4, 2/3]. Adam gets near them from CROWN's r = 1 (-6 and 10).
TEST(LirpaBilinear, AlphaMixesThePlanesOfAProduct) {
  Graph g = load_onnx_bytes(product_of_inputs());
  at::Tensor lo = dbl({-1, -1}, {2}), hi = dbl({2, 3}, {2});
  BoundOptions o;
  o.method = Method::AlphaCrown;
  o.alpha.iterations = 60;
  o.alpha.early_stop_patience = 60;
  BoundsResult alpha = compute_bounds(g, lo, hi, o);
  EXPECT_LE(alpha.lower.item<double>(), -3.0 + 1e-12);  // sound: x1 x2 = -3 at (-1, 3)
  EXPECT_GE(alpha.lower.item<double>(), -3.5);
  EXPECT_GE(alpha.upper.item<double>(), 6.0 - 1e-12);   // sound: x1 x2 = 6 at (2, 3)
  EXPECT_LE(alpha.upper.item<double>(), 6.5);
  expect_contains_samples(g, lo, hi, alpha, 10000, "Mul alpha");
}

// Z = X Y, X = [x1 x2] (1 x 2), Y = [x3; x4] (2 x 1): z = x1 x3 + x2 x4, each product
// relaxed by its own planes; the bounds are sums of per-product plane extrema (the
// products share no variable), computed here from the formulas in float64.
TEST(LirpaBilinear, MatMulOfInputsByHand) {
  OnnxBuilder b("x", {1, 4});
  auto xs = b.node("Slice", {b.input(), b.constant("s0", at::tensor({0}, at::kLong)),
                             b.constant("e0", at::tensor({2}, at::kLong)), b.constant("a0", at::tensor({1}, at::kLong))});
  auto ys = b.node("Slice", {b.input(), b.constant("s1", at::tensor({2}, at::kLong)),
                             b.constant("e1", at::tensor({4}, at::kLong)), b.constant("a1", at::tensor({1}, at::kLong))});
  auto y = b.node("Transpose", {ys}, {OnnxAttr::list("perm", {1, 0})});  // [2, 1]
  b.set_output(b.node("MatMul", {xs, y}));
  Graph g = load_onnx_bytes(b.bytes());
  const std::vector<double> l{-1.0, 0.5, -2.0, -0.5}, u{2.0, 1.5, 1.0, 3.0};
  BoundsResult crown = bounds(g, dbl(l, {4}), dbl(u, {4}), Method::Crown);
  double lower = 0, upper = 0;
  for (int k = 0; k < 2; ++k) {
    const double lx = l[k], ux = u[k], ly = l[k + 2], uy = u[k + 2];
    // min over the box of ly x + lx y - lx ly; max of uy x + lx y - lx uy
    lower += std::min(ly * lx, ly * ux) + std::min(lx * ly, lx * uy) - lx * ly;
    upper += std::max(uy * lx, uy * ux) + std::max(lx * ly, lx * uy) - lx * uy;
  }
  EXPECT_NEAR(crown.lower.item<double>(), lower, 1e-12);
  EXPECT_NEAR(crown.upper.item<double>(), upper, 1e-12);
}

// A MatMul's plane mix per product X_ik Y_kj: alpha-CROWN tightens CROWN's bounds
// and stays sound.
TEST(LirpaBilinear, AlphaMixesThePlanesOfAMatMul) {
  Graph g = load_onnx_bytes(matmul_net());
  at::manual_seed(3);
  at::Tensor c = at::randn({12}, at::kDouble), lo = c - 0.2, hi = c + 0.2;
  BoundsResult crown = bounds(g, lo, hi, Method::Crown), alpha = bounds(g, lo, hi, Method::AlphaCrown);
  expect_contains_samples(g, lo, hi, alpha, 10000, "MatMul alpha");
  EXPECT_TRUE((alpha.lower >= crown.lower - 1e-12).all().item<bool>());
  EXPECT_TRUE((alpha.upper <= crown.upper + 1e-12).all().item<bool>());
  EXPECT_GT((crown.upper - crown.lower).sum().item<double>() - (alpha.upper - alpha.lower).sum().item<double>(), 1e-3)
      << "the plane mix tightened nothing";
}

}  // namespace
}  // namespace tessera::lirpa
