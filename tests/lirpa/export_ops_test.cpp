// What torch.onnx.export writes around a ViT's attention: Split of an activation (q, k, v
// from one fused Linear) and constant shape arithmetic (Equal, Where, Pow of a head size).
// Split is a selection of entries, so CROWN is exact (the extremes over the box's vertices).
// And interval bounds keep a small shift beside a wide interval (LayerNorm's variance + eps).

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/onnx_builder.h"

namespace tessera::lirpa {
namespace {

// x [1, 6] -> h = x W -> Split {2, 4} (opset-13 input) -> the 4 split in 2 equal parts (no
// sizes) -> joined in another order with a constant token expanded by a folded
// Where(Equal(shape, -1), 1, shape) -> times 4^-0.5 (folded Pow) -> V.
std::string split_net() {
  at::manual_seed(6);
  OnnxBuilder b("x", {1, 6});
  auto h = b.node("MatMul", {b.input(), b.constant("w", at::randn({6, 6}, at::kDouble))});
  auto ab = b.node_with_outputs("Split", {h, b.constant("sizes", at::tensor({2, 4}, at::kLong))}, 2,
                                {OnnxAttr::integer("axis", 1)});
  auto cd = b.node_with_outputs("Split", {ab[1]}, 2, {OnnxAttr::integer("axis", -1)});
  auto shape = b.constant("shape", at::tensor({1, -1}, at::kLong));
  auto minus_one = b.constant("minus_one", at::tensor({-1}, at::kLong));
  auto wanted = b.node("Where", {b.node("Equal", {shape, minus_one}), b.constant("ones", at::ones({2}, at::kLong)), shape});
  auto token = b.node("Expand", {b.constant("token", at::randn({1, 2}, at::kDouble)), wanted});
  auto joined = b.node("Concat", {cd[1], ab[0], token, cd[0]}, {OnnxAttr::integer("axis", 1)});  // [1, 8]
  auto scale = b.node("Pow", {b.constant("four", at::scalar_tensor(4.0, at::kDouble)),
                              b.constant("minus_half", at::scalar_tensor(-0.5, at::kDouble))});
  auto scaled = b.node("Mul", {joined, scale});
  b.set_output(b.node("MatMul", {scaled, b.constant("v", at::randn({8, 3}, at::kDouble))}));
  return b.bytes();
}

TEST(LirpaExportOps, SplitAndFoldedShapeArithmeticAreExactInCrown) {
  Graph g = load_onnx_bytes(split_net());
  ASSERT_EQ(g.output_size(), 3);
  at::manual_seed(7);
  at::Tensor c = at::randn({6}, at::kDouble), lo = c - 0.3, hi = c + 0.3;
  // the same network by hand: y = 0.5 [h_4:6, h_0:2, t, h_2:4] V
  at::manual_seed(6);
  at::Tensor w = at::randn({6, 6}, at::kDouble), t = at::randn({1, 2}, at::kDouble), v = at::randn({8, 3}, at::kDouble);
  at::Tensor bits = at::arange(64, at::kLong).unsqueeze(1).bitwise_right_shift(at::arange(6, at::kLong)).bitwise_and(1);
  at::Tensor vertices = at::where(bits.to(at::kBool), hi, lo);
  at::Tensor h = at::matmul(vertices, w);
  at::Tensor joined = at::cat({h.slice(1, 4, 6), h.slice(1, 0, 2), t.expand({64, 2}), h.slice(1, 2, 4)}, 1);
  at::Tensor y = at::matmul(0.5 * joined, v);
  EXPECT_TRUE(at::allclose(g.forward(vertices.reshape({64, 1, 6}), at::kDouble).reshape({64, -1}), y, 1e-12, 1e-12));
  BoundsResult r = compute_bounds(g, lo, hi, BoundOptions{Method::Crown});
  EXPECT_TRUE(at::allclose(r.lower, std::get<0>(y.min(0)), 1e-12, 1e-12)) << r.lower;
  EXPECT_TRUE(at::allclose(r.upper, std::get<0>(y.max(0)), 1e-12, 1e-12)) << r.upper;
  BoundsResult ibp = compute_bounds(g, lo, hi, BoundOptions{Method::Ibp});
  EXPECT_TRUE((ibp.lower <= r.lower + 1e-12).all().item<bool>() && (ibp.upper >= r.upper - 1e-12).all().item<bool>());
}

TEST(LirpaExportOps, SplitSizesThatDoNotFitAreAParseError) {
  OnnxBuilder b("x", {1, 4});
  auto parts = b.node_with_outputs("Split", {b.input(), b.constant("sizes", at::tensor({1, 2}, at::kLong))}, 2,
                                   {OnnxAttr::integer("axis", 1)});
  b.set_output(parts[0]);
  EXPECT_THROW(load_onnx_bytes(b.bytes()), ParseError);
}

// 1 / sqrt(x^2 + eps) over x in [-1e8, 1e8]: the interval of x^2 + eps is [eps, 1e16 + eps],
// so the reciprocal is at most eps^-1/2, finite.
TEST(LirpaExportOps, IntervalBoundsKeepASmallShiftBesideAWideInterval) {
  OnnxBuilder b("x", {1, 1});
  auto sq = b.node("Pow", {b.input(), b.constant("two", at::scalar_tensor(2.0, at::kDouble))});
  auto var = b.node("Add", {sq, b.constant("eps", at::scalar_tensor(1e-5, at::kDouble))});
  b.set_output(b.node("Reciprocal", {b.node("Sqrt", {var})}));
  Graph g = load_onnx_bytes(b.bytes());
  BoundsResult r = compute_bounds(g, at::full({1}, -1e8, at::kDouble), at::full({1}, 1e8, at::kDouble),
                                  BoundOptions{Method::Ibp});
  EXPECT_NEAR(r.upper.item<double>(), 1 / std::sqrt(1e-5), 1e-6);
  EXPECT_NEAR(r.lower.item<double>(), 1e-8, 1e-20);
}

}  // namespace
}  // namespace tessera::lirpa
