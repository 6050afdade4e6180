// Selections and joins of activations (Slice, Gather, Concat with a constant): linear, so
// CROWN is exact (equal to the extremes over the box's vertices), and loader errors name
// the node and the problem.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/onnx_builder.h"

namespace tessera::lirpa {
namespace {

// x [1, 2, 3] -> h = x W (W [3, 3]) -> Slice rows 1: (opset-9 attributes) and Gather
// column 2 -> joined with a constant class token along the token axis -> flatten -> V.
std::string token_net() {
  at::manual_seed(4);
  OnnxBuilder b("x", {1, 2, 3});
  auto h = b.node("MatMul", {b.input(), b.constant("w", at::randn({3, 3}, at::kDouble))});
  auto rows = b.node("Slice", {h}, {OnnxAttr::list("starts", {1}), OnnxAttr::list("ends", {9}),
                                    OnnxAttr::list("axes", {1})});                               // [1, 1, 3]
  auto col = b.node("Gather", {h, b.constant("i", at::scalar_tensor(-1, at::kLong))}, {OnnxAttr::integer("axis", 2)});  // [1, 2]
  auto col3 = b.node("Unsqueeze", {col}, {OnnxAttr::list("axes", {2})});                         // [1, 2, 1]
  auto wide = b.node("Concat", {col3, col3, col3}, {OnnxAttr::integer("axis", 2)});             // [1, 2, 3]
  auto cls = b.constant("cls", at::randn({1, 1, 3}, at::kDouble));
  auto tokens = b.node("Concat", {cls, rows, wide}, {OnnxAttr::integer("axis", 1)});           // [1, 4, 3]
  auto flat = b.node("Flatten", {tokens}, {OnnxAttr::integer("axis", 1)});
  b.set_output(b.node("MatMul", {flat, b.constant("v", at::randn({12, 2}, at::kDouble))}));
  return b.bytes();
}

TEST(LirpaIndexOps, CrownOfLinearSelectionsIsExact) {
  Graph g = load_onnx_bytes(token_net());
  at::manual_seed(5);
  at::Tensor c = at::randn({6}, at::kDouble), lo = c - 0.2, hi = c + 0.2;
  BoundOptions o;
  o.method = Method::Crown;
  BoundsResult r = compute_bounds(g, lo, hi, o);
  // the outputs are linear in x: their extremes lie on the 2^6 vertices of the box
  at::Tensor bits = at::arange(64, at::kLong).unsqueeze(1).bitwise_right_shift(at::arange(6, at::kLong)).bitwise_and(1);
  at::Tensor vertices = at::where(bits.to(at::kBool), hi, lo);
  at::Tensor y = g.forward(vertices.reshape({64, 1, 2, 3}), at::kDouble).reshape({64, -1});
  EXPECT_TRUE(at::allclose(r.lower, std::get<0>(y.min(0)), 1e-12, 1e-12));
  EXPECT_TRUE(at::allclose(r.upper, std::get<0>(y.max(0)), 1e-12, 1e-12));
  BoundsResult ibp = compute_bounds(g, lo, hi, BoundOptions{Method::Ibp});
  EXPECT_TRUE((ibp.lower <= r.lower + 1e-12).all().item<bool>());
}

TEST(LirpaIndexOps, SliceWithVariableStartsNamesTheNodeAndInput) {
  OnnxBuilder b("x", {1, 4});
  auto starts = b.node("Gemm", {b.input(), b.constant("w", at::ones({4, 1}, at::kDouble))});
  b.set_output(b.node("Slice", {b.input(), starts, b.constant("e", at::tensor({2}, at::kLong))}));
  try {
    load_onnx_bytes(b.bytes());
    FAIL() << "expected Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("Slice"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("starts input must be a constant"), std::string::npos) << e.what();
  }
}

TEST(LirpaIndexOps, GatherIndexOutsideTheAxisIsAParseError) {
  OnnxBuilder b("x", {1, 4});
  b.set_output(b.node("Gather", {b.input(), b.constant("i", at::tensor({4}, at::kLong))}, {OnnxAttr::integer("axis", 1)}));
  EXPECT_THROW(load_onnx_bytes(b.bytes()), ParseError);
}

}  // namespace
}  // namespace tessera::lirpa
