// The element-wise non-linear operators (Exp, Reciprocal, Sqrt, Pow 2, Erf, Gelu) and the
// reductions (ReduceSum, ReduceMean): IBP, CROWN and alpha-CROWN bounds contain 10^4 sampled
// outputs on random boxes (narrow, wide, at the domain's edge), in small graphs that put each
// operator behind and before dense layers; extreme inputs give infinite bounds, never NaN.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "random_nets.h"
#include "tessera/core/error.h"

namespace tessera::lirpa {
namespace {

using testing::expect_sound;
using testing::randn;

/// `op` applied to `x` (Pow with the exponent 2 as a constant input).
std::string apply(OnnxBuilder& b, const std::string& op, const std::string& x) {
  if (op == "Pow") return b.node("Pow", {x, b.constant(x + "_exponent", at::full({}, 2.0, at::kDouble))});
  return b.node(op, {x});
}

std::string gemm(OnnxBuilder& b, const std::string& x, int64_t n_in, int64_t n_out, double scale = 1.0) {
  static int count = 0;
  std::string k = std::to_string(count++);
  auto w = b.constant("w" + k, randn({n_out, n_in}, scale / std::sqrt(double(n_in))));
  auto bias = b.constant("b" + k, randn({n_out}, 0.1));
  return b.node("Gemm", {x, w, bias}, {OnnxAttr::integer("transB", 1)});
}

/// x [1, 4] -> op -> Gemm 4 -> 3: the operator on the input box itself.
Graph op_on_input(const std::string& op) {
  OnnxBuilder b("x", {1, 4});
  b.set_output(gemm(b, apply(b, op, b.input()), 4, 3));
  return load_onnx_bytes(b.bytes());
}

/// x [1, 4] -> Gemm 6 -> op -> Gemm 5 -> op -> Gemm 3: CROWN bounds of the operator's inputs.
Graph op_between_layers(const std::string& op) {
  OnnxBuilder b("x", {1, 4});
  auto h = apply(b, op, gemm(b, b.input(), 4, 6));
  b.set_output(gemm(b, apply(b, op, gemm(b, h, 6, 5, 0.5)), 5, 3));
  return load_onnx_bytes(b.bytes());
}

/// A box of half-width `r` around a random centre (scaled by `spread`) shifted by `shift`.
std::pair<at::Tensor, at::Tensor> box(int64_t n, double r, double spread = 1.0, double shift = 0.0) {
  at::Tensor c = randn({n}, spread) + shift;
  return {c - r, c + r};
}

TEST(LirpaNonlinearOps, ExpPowErfGeluOnRandomBoxes) {
  at::manual_seed(11);
  for (const char* op : {"Exp", "Pow", "Erf", "Gelu"}) {
    for (double r : {0.01, 0.5, 2.0}) {
      auto [lo, hi] = box(4, r);
      expect_sound(op_on_input(op), lo, hi, 10000);
      expect_sound(op_between_layers(op), lo, hi, 10000);
    }
  }
}

TEST(LirpaNonlinearOps, GeluOnWideAndShiftedBoxes) {
  // boxes across every curvature piece, around the minimum x_min ~ -0.75, and far out
  at::manual_seed(18);
  Graph g = op_on_input("Gelu");
  for (auto [r, shift] : {std::pair{0.2, -0.75}, {1.5, -1.4}, {3.0, 0.0}, {50.0, 0.0}, {0.5, 12.0}, {0.5, -12.0}}) {
    auto [lo, hi] = box(4, r, 0.1, shift);
    expect_sound(g, lo, hi, 10000);
  }
}

TEST(LirpaNonlinearOps, EveryOperatorInFloat32) {
  at::manual_seed(12);
  for (const char* op : {"Exp", "Pow", "Erf", "Gelu"}) {
    auto [lo, hi] = box(4, 0.5);
    expect_sound(op_between_layers(op), lo, hi, 10000, at::kFloat, 1e-5);
  }
  for (const char* op : {"Sqrt", "Reciprocal"}) {
    auto [lo, hi] = box(4, 0.4, 0.0, 1.0);  // [0.6, 1.4]
    expect_sound(op_on_input(op), lo, hi, 10000, at::kFloat, 1e-5);
  }
  expect_sound(op_on_input("Sqrt"), at::zeros({4}, at::kDouble), at::ones({4}, at::kDouble), 10000, at::kFloat, 1e-5);
}

TEST(LirpaNonlinearOps, ReciprocalOnOneSignedBoxes) {
  at::manual_seed(13);
  Graph g = op_on_input("Reciprocal");
  for (double r : {0.01, 0.4, 0.99}) {
    auto [lo, hi] = box(4, r, 0.0, 1.0);  // positive: [1 - r, 1 + r]
    expect_sound(g, lo, hi, 10000);
    expect_sound(g, -hi, -lo, 10000);  // negative (concave part)
  }
  // within 1e-6 of 0 (constant lines) and a wide positive box
  expect_sound(g, at::full({4}, 1e-7, at::kDouble), at::full({4}, 2.0, at::kDouble), 10000);
  expect_sound(g, at::full({4}, 0.01, at::kDouble), at::full({4}, 100.0, at::kDouble), 10000);
}

TEST(LirpaNonlinearOps, ReciprocalOfSumsOfExponentials) {
  // softmax's denominator: 1 / (sum_j w_j e^(z_j)) with w > 0 stays positive under CROWN
  // because Exp's default tangents are positive on their boxes
  at::manual_seed(14);
  OnnxBuilder b("x", {1, 3});
  auto e = b.node("Exp", {gemm(b, b.input(), 3, 4)});
  auto w = b.constant("wpos", at::rand({2, 4}, at::kDouble) + 0.1);
  auto s = b.node("Gemm", {e, w}, {OnnxAttr::integer("transB", 1)});
  b.set_output(gemm(b, b.node("Reciprocal", {s}), 2, 2));
  Graph g = load_onnx_bytes(b.bytes());
  for (double r : {0.05, 0.5, 1.5}) {
    auto [lo, hi] = box(3, r);
    expect_sound(g, lo, hi, 10000);
    BoundOptions o;
    BoundsResult crown = compute_bounds(g, lo, hi, o);
    EXPECT_TRUE(at::isfinite(crown.lower).all().item<bool>()) << crown.lower;
  }
}

TEST(LirpaNonlinearOps, SqrtAtTheDomainEdge) {
  at::manual_seed(15);
  Graph g = op_on_input("Sqrt");
  for (double w : {1e-3, 1.0, 50.0}) {
    expect_sound(g, at::zeros({4}, at::kDouble), at::full({4}, w, at::kDouble), 10000);  // touches 0
    auto [lo, hi] = box(4, 0.25 * w, 0.0, 0.5 * w);  // [w/4, 3w/4]
    expect_sound(g, lo, hi, 10000);
  }
}

TEST(LirpaNonlinearOps, LayerNormStyleChain) {
  // 1 / sqrt(mean((W x + b)^2) + 1): Pow, ReduceMean, Add, Sqrt, Reciprocal; CROWN bounds
  // of the mean may fall below 0 (Sqrt clips its bounds to its domain)
  at::manual_seed(16);
  OnnxBuilder b("x", {1, 4});
  auto sq = apply(b, "Pow", gemm(b, b.input(), 4, 6));
  auto mean = b.node("ReduceMean", {sq}, {OnnxAttr::list("axes", {1}), OnnxAttr::integer("keepdims", 1)});
  auto shifted = b.node("Add", {mean, b.constant("eps", at::full({1}, 1.0, at::kDouble))});
  auto inv = b.node("Reciprocal", {b.node("Sqrt", {shifted})});
  b.set_output(gemm(b, b.node("Add", {sq, inv}), 6, 2));
  Graph g = load_onnx_bytes(b.bytes());
  for (double r : {0.02, 0.3, 1.0}) {
    auto [lo, hi] = box(4, r);
    expect_sound(g, lo, hi, 10000);
  }
}

TEST(LirpaNonlinearOps, ReductionsInEveryForm) {
  at::manual_seed(17);
  for (const char* op : {"ReduceSum", "ReduceMean"}) {
    OnnxBuilder b("x", {1, 2, 3});
    auto m = b.node("MatMul", {b.input(), b.constant(std::string(op) + "_w", randn({3, 4}))});  // [1, 2, 4]
    // attribute axes (opset < 13), negative axis, keepdims 0: [1, 4]
    auto r1 = b.node(op, {m}, {OnnxAttr::list("axes", {-2}), OnnxAttr::integer("keepdims", 0)});
    // axes as a constant input (ReduceSum opset 13+, ReduceMean 18+), keepdims 1: [1, 2, 1]
    auto r2 = b.node(op, {b.node("Exp", {m}), b.constant(std::string(op) + "_axes", at::tensor({2}, at::kLong))});
    auto all = b.node(op, {b.node("Relu", {r2})});  // every axis: [1, 1, 1]
    auto noop = b.node(op, {r1}, {OnnxAttr::integer("noop_with_empty_axes", 1)});  // y = x
    b.set_output(b.node("Add", {noop, b.node("Flatten", {all}, {OnnxAttr::integer("axis", 1)})}));
    Graph g = load_onnx_bytes(b.bytes());
    EXPECT_EQ(g.output_shape(), (std::vector<int64_t>{1, 4}));
    for (double r : {0.05, 1.0}) {
      auto [lo, hi] = box(6, r);
      expect_sound(g, lo, hi, 10000);
    }
  }
}

/// Every method's bounds of `g` on the box (IBP only when `with_ibp`: a dense layer's IBP
/// after an infinite bound is NaN in its centre-radius form, which is not this test's subject).
std::vector<std::pair<Method, BoundsResult>> all_methods(const Graph& g, const at::Tensor& lo, const at::Tensor& hi,
                                                         bool with_ibp) {
  std::vector<std::pair<Method, BoundsResult>> out;
  for (Method m : {Method::Ibp, Method::Crown, Method::AlphaCrown}) {
    if (m == Method::Ibp && !with_ibp) continue;
    BoundOptions o;
    o.method = m;
    out.emplace_back(m, compute_bounds(g, lo, hi, o));
  }
  return out;
}

TEST(LirpaNonlinearOps, ExpOverflowGivesInfiniteBoundsNotNan) {
  // e^x for x up to 800 is inf in float64: rows that need an upper line of e^x get -inf
  // lower bounds (no NaN from inf * 0 in the A products); rows with positive coefficients
  // keep finite lower bounds
  OnnxBuilder b("x", {1, 2});
  auto w = b.constant("w", at::tensor({1.0, 1.0, 1.0, -1.0}, at::kDouble).reshape({2, 2}));
  b.set_output(b.node("MatMul", {b.node("Exp", {b.input()}), w}));  // [e1 + e2, e1 - e2]
  Graph g = load_onnx_bytes(b.bytes());
  at::Tensor lo = at::zeros({2}, at::kDouble), hi = at::full({2}, 800.0, at::kDouble);
  for (auto& [m, r] : all_methods(g, lo, hi, false)) {
    EXPECT_FALSE(at::isnan(r.lower).any().item<bool>() || at::isnan(r.upper).any().item<bool>())
        << method_name(m) << r.lower << r.upper;
    EXPECT_TRUE(std::isfinite(r.lower[0].item<double>()) && r.lower[0].item<double>() <= 2.0) << method_name(m);
    EXPECT_EQ(r.upper[0].item<double>(), INFINITY) << method_name(m);
    EXPECT_EQ(r.lower[1].item<double>(), -INFINITY) << method_name(m);
  }
  OnnxBuilder last("x", {1, 2});  // Exp as the output: every method, IBP included
  last.set_output(last.node("Exp", {last.input()}));
  for (auto& [m, r] : all_methods(load_onnx_bytes(last.bytes()), lo, hi, true)) {
    EXPECT_TRUE((r.lower == 1).all().item<bool>()) << method_name(m) << r.lower;
    EXPECT_TRUE((r.upper == INFINITY).all().item<bool>()) << method_name(m) << r.upper;
  }
}

TEST(LirpaNonlinearOps, ReciprocalAcrossZeroIsUnbounded) {
  OnnxBuilder last("x", {1, 4});
  last.set_output(last.node("Reciprocal", {last.input()}));
  at::Tensor lo = -at::ones({4}, at::kDouble), hi = at::ones({4}, at::kDouble);
  for (auto& [g, with_ibp] : {std::pair{op_on_input("Reciprocal"), false}, {load_onnx_bytes(last.bytes()), true}}) {
    for (auto& [m, r] : all_methods(g, lo, hi, with_ibp)) {
      EXPECT_TRUE((r.lower == -INFINITY).all().item<bool>()) << method_name(m) << r.lower;
      EXPECT_TRUE((r.upper == INFINITY).all().item<bool>()) << method_name(m) << r.upper;
    }
  }
}

TEST(LirpaNonlinearOps, PartlyUnboundedLayersStayNanFree) {
  // some Reciprocal inputs cross 0 (their rows become -inf), the others do not; Exp and Gelu
  // after them: CROWN and alpha-CROWN (slopes optimised through the infinite rows) never NaN
  at::manual_seed(19);
  OnnxBuilder b("x", {1, 3});
  auto w = b.constant("w_shift", at::tensor({1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0}, at::kDouble).reshape({3, 3}));
  auto shift = b.constant("b_shift", at::tensor({0.0, 3.0, -3.0}, at::kDouble));
  auto r = b.node("Reciprocal", {b.node("Gemm", {b.input(), w, shift}, {OnnxAttr::integer("transB", 1)})});
  auto e = apply(b, "Exp", gemm(b, r, 3, 4, 0.5));
  b.set_output(gemm(b, apply(b, "Gelu", gemm(b, e, 4, 4, 0.5)), 4, 2));
  Graph g = load_onnx_bytes(b.bytes());
  at::Tensor lo = -at::ones({3}, at::kDouble), hi = at::ones({3}, at::kDouble);  // x1 + 0 crosses 0
  for (auto& [m, res] : all_methods(g, lo, hi, false)) {
    EXPECT_FALSE(at::isnan(res.lower).any().item<bool>() || at::isnan(res.upper).any().item<bool>())
        << method_name(m) << res.lower << res.upper;
  }
  expect_sound(g, lo + 1.5, hi + 1.5, 10000);  // every input of the Reciprocal one-signed: finite
}

TEST(LirpaNonlinearOps, UnsupportedForms) {
  OnnxBuilder b("x", {1, 2});
  b.set_output(b.node("Pow", {b.input(), b.constant("three", at::full({}, 3.0, at::kDouble))}));
  EXPECT_THROW(load_onnx_bytes(b.bytes()), Unsupported);
}

}  // namespace
}  // namespace tessera::lirpa
