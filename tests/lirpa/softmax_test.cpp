// Operators composed when the model loads (composite.cpp): Softmax, Div of two variables and
// the LayerNorm pattern PyTorch exports (ReduceMean, Sub, Pow 2, Sqrt, Div), and the ONNX
// LayerNormalization node composed the same way. Their bounds
// contain 10^4 sampled outputs for IBP, CROWN and alpha-CROWN. Softmax's pairwise
// differences of a linear layer get the exact (float64 hand) bounds from CROWN, and the
// monotone operators after them (Reciprocal, Exp) the exact range of their input's bounds.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/onnx_builder.h"

namespace tessera::lirpa {
namespace {

void expect_sound(const std::string& onnx, double radius, const std::string& what) {
  Graph g = load_onnx_bytes(onnx);
  const int64_t k = g.node(0).shape.back();
  at::manual_seed(21);
  at::Tensor c = at::randn({k}, at::kDouble), lo = c - radius, hi = c + radius;
  constexpr int64_t n = 10000;
  at::Tensor t = at::rand({n, k}, at::kDouble);
  t.slice(0, 0, n / 4).round_();  // a quarter on the box's corners
  std::vector<int64_t> shape{n};
  for (int64_t d : g.input_shape()) shape.push_back(d);
  at::Tensor y = g.forward((lo + (hi - lo) * t).reshape(shape), at::kDouble).reshape({n, -1});
  for (Method m : {Method::Ibp, Method::Crown, Method::AlphaCrown}) {
    BoundOptions o;
    o.method = m;
    BoundsResult r = compute_bounds(g, lo, hi, o);
    EXPECT_TRUE((y >= r.lower.unsqueeze(0) - 1e-9).all().item<bool>())
        << what << " " << method_name(m) << ": below the lower bound by " << (r.lower.unsqueeze(0) - y).max().item<double>();
    EXPECT_TRUE((y <= r.upper.unsqueeze(0) + 1e-9).all().item<bool>())
        << what << " " << method_name(m) << ": above the upper bound by " << (y - r.upper.unsqueeze(0)).max().item<double>();
  }
}

std::string constant_ints(OnnxBuilder& b, const std::string& name, std::vector<int64_t> v) {
  return b.constant(name, at::tensor(v, at::kLong));
}

// x [1, 5] -> scores = reshape(x W, [1, 2, 4]) -> softmax over the last axis -> flatten -> V
std::string softmax_net() {
  at::manual_seed(22);
  OnnxBuilder b("x", {1, 5});
  auto h = b.node("MatMul", {b.input(), b.constant("w", 2 * at::randn({5, 8}, at::kDouble))});
  auto s = b.node("Reshape", {h, constant_ints(b, "s", {1, 2, 4})});
  auto p = b.node("Softmax", {s}, {OnnxAttr::integer("axis", -1)});
  auto f = b.node("Reshape", {p, constant_ints(b, "f", {1, 8})});
  b.set_output(b.node("MatMul", {f, b.constant("v", at::randn({8, 3}, at::kDouble))}));
  return b.bytes();
}

// x [1, 4] -> a = x W1, d = x W2 + 4 (positive on the box) -> a / d -> U
std::string div_net() {
  at::manual_seed(23);
  OnnxBuilder b("x", {1, 4});
  auto a = b.node("MatMul", {b.input(), b.constant("w1", at::randn({4, 3}, at::kDouble))});
  auto d = b.node("Gemm", {b.input(), b.constant("w2", 0.5 * at::randn({4, 3}, at::kDouble)),
                           b.constant("b2", at::full({3}, 4.0, at::kDouble))});
  b.set_output(b.node("MatMul", {b.node("Div", {a, d}), b.constant("u", at::randn({3, 2}, at::kDouble))}));
  return b.bytes();
}

// x [1, 6] -> h = reshape(x W, [1, 2, 3]) -> LayerNorm over the last axis as exported:
// m = mean(h), d = h - m, v = mean(d^2), y = d / sqrt(v + eps) -> flatten -> U
std::string layer_norm_net() {
  at::manual_seed(24);
  OnnxBuilder b("x", {1, 6});
  auto h = b.node("Reshape", {b.node("MatMul", {b.input(), b.constant("w", at::randn({6, 6}, at::kDouble))}),
                              constant_ints(b, "s", {1, 2, 3})});
  auto axes = OnnxAttr::list("axes", {-1});
  auto m = b.node("ReduceMean", {h}, {axes});
  auto d = b.node("Sub", {h, m});
  auto v = b.node("ReduceMean", {b.node("Pow", {d, b.constant("two", at::scalar_tensor(2.0, at::kDouble))})}, {axes});
  auto sd = b.node("Sqrt", {b.node("Add", {v, b.constant("eps", at::scalar_tensor(1e-5, at::kDouble))})});
  auto y = b.node("Reshape", {b.node("Div", {d, sd}), constant_ints(b, "f", {1, 6})});
  b.set_output(b.node("MatMul", {y, b.constant("u", at::randn({6, 2}, at::kDouble))}));
  return b.bytes();
}

// the same as one LayerNormalization node (opset 17) with a scale and a bias
std::string layer_norm_node_net() {
  at::manual_seed(25);
  OnnxBuilder b("x", {1, 6});
  auto h = b.node("Reshape", {b.node("MatMul", {b.input(), b.constant("w", at::randn({6, 6}, at::kDouble))}),
                              constant_ints(b, "s", {1, 2, 3})});
  auto y = b.node("LayerNormalization", {h, b.constant("g", at::randn({3}, at::kDouble)), b.constant("b", at::randn({3}, at::kDouble))},
                  {OnnxAttr::integer("axis", -1), OnnxAttr::real("epsilon", 1e-5)});
  auto f = b.node("Reshape", {y, constant_ints(b, "f", {1, 6})});
  b.set_output(b.node("MatMul", {f, b.constant("u", at::randn({6, 2}, at::kDouble))}));
  return b.bytes();
}

TEST(LirpaComposite, SoftmaxBoundsContainSamples) { expect_sound(softmax_net(), 0.3, "Softmax"); }

TEST(LirpaComposite, DivOfVariablesBoundsContainSamples) { expect_sound(div_net(), 0.3, "Div"); }

TEST(LirpaComposite, LayerNormPatternBoundsContainSamples) { expect_sound(layer_norm_net(), 0.05, "LayerNorm"); }

TEST(LirpaComposite, LayerNormalizationNodeBoundsContainSamples) {
  expect_sound(layer_norm_node_net(), 0.05, "LayerNormalization");
}

// x [1, 3] -> h = x W -> softmax(h) -> exp -> reciprocal -> V
std::string softmax_chain_net(const at::Tensor& w) {
  at::manual_seed(26);
  OnnxBuilder b("x", {1, 3});
  auto h = b.node("MatMul", {b.input(), b.constant("w", w)});
  auto y = b.node("Reciprocal", {b.node("Exp", {b.node("Softmax", {h}, {OnnxAttr::integer("axis", -1)})})});
  b.set_output(b.node("MatMul", {y, b.constant("v", at::randn({3, 2}, at::kDouble))}));
  return b.bytes();
}

int node_of_type(const Graph& g, const std::string& type) {
  for (const Node& n : g.nodes())
    if (n.op && n.op->type() == type) return n.id;
  return -1;
}

TEST(LirpaComposite, SoftmaxDifferencesExactAndMonotoneOpsTakeTheirInputsRange) {
  at::manual_seed(27);
  at::Tensor w = at::randn({3, 3}, at::kDouble);
  Graph g = load_onnx_bytes(softmax_chain_net(w));
  at::Tensor mid = at::tensor({0.3, -0.2, 0.5}, at::kDouble), rad = at::tensor({0.1, 0.2, 0.05}, at::kDouble);
  BoundOptions o;
  o.method = Method::Crown;
  o.keep_intermediate = true;
  BoundsResult r = compute_bounds(g, mid - rad, mid + rad, o);
  // d_ij = h_j - h_i = x . (W[:, j] - W[:, i]): over the box, mid . c -+ rad . |c|
  const int d = node_of_type(g, "PairwiseDifference");
  ASSERT_GE(d, 0);
  ASSERT_TRUE(r.intermediate.count(d));
  at::Tensor dl = r.intermediate.at(d).lower.reshape({3, 3}), du = r.intermediate.at(d).upper.reshape({3, 3});
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      at::Tensor c = w.select(1, j) - w.select(1, i);
      const double centre = (mid * c).sum().item<double>(), spread = (rad * c.abs()).sum().item<double>();
      EXPECT_NEAR(dl[i][j].item<double>(), centre - spread, 1e-12) << i << "," << j;
      EXPECT_NEAR(du[i][j].item<double>(), centre + spread, 1e-12) << i << "," << j;
    }
  }
  // softmax's own reciprocal (the input of Exp) is 1 / [s_u, s_l] of the sum's bounds, and Exp
  // (the input of the last Reciprocal) exp of that, exactly
  const int s = node_of_type(g, "ReduceSum");
  ASSERT_GE(s, 0);
  const int y = s + 1, e = s + 2;
  ASSERT_EQ(g.node(y).op->type(), "Reciprocal");
  ASSERT_EQ(g.node(e).op->type(), "Exp");
  ASSERT_TRUE(r.intermediate.count(s) && r.intermediate.count(y) && r.intermediate.count(e));
  const Interval& bs = r.intermediate.at(s);
  const Interval& by = r.intermediate.at(y);
  const Interval& be = r.intermediate.at(e);
  EXPECT_TRUE(at::equal(by.lower, 1 / bs.upper) && at::equal(by.upper, 1 / bs.lower));
  EXPECT_TRUE(at::equal(be.lower, at::exp(by.lower)) && at::equal(be.upper, at::exp(by.upper)));
  EXPECT_TRUE((bs.lower >= 1).all().item<bool>());  // e^{h_i - h_i} = 1 is in every sum
}

}  // namespace
}  // namespace tessera::lirpa
