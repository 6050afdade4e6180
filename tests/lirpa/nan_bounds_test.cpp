// A bound that overflows (exp of a wide box is inf, and inf - inf is NaN in a dense layer's
// interval arithmetic) must prove nothing: every bound comes out NaN-free (-inf / +inf where
// it was NaN), and verification never answers unsat through such a bound.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "random_nets.h"
#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/verify.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::lirpa {
namespace {

/// x [2] -> Exp -> Gemm (2 -> 3, mixed signs) -> Relu -> Gemm (3 -> 1).
Graph overflowing_net() {
  OnnxBuilder b("x", {1, 2});
  auto e = b.node("Exp", {b.input()});
  at::Tensor w1 = at::tensor({1.0, -1.0, 0.5, 1.0, -2.0, 0.25}, at::kDouble).reshape({3, 2});
  auto h = b.node("Gemm", {e, b.constant("w1", w1), b.constant("b1", at::zeros({3}, at::kDouble))},
                  {OnnxAttr::integer("transB", 1)});
  auto r = b.node("Relu", {h});
  at::Tensor w2 = at::tensor({1.0, -1.0, 1.0}, at::kDouble).reshape({1, 3});
  b.set_output(b.node("Gemm", {r, b.constant("w2", w2), b.constant("b2", at::zeros({1}, at::kDouble))},
                      {OnnxAttr::integer("transB", 1)}));
  return load_onnx_bytes(b.bytes());
}

TEST(LirpaNanBounds, OverflowingBoundsAreInfiniteNotNan) {
  Graph g = overflowing_net();
  at::Tensor lo = at::zeros({2}, at::kDouble), hi = at::full({2}, 800.0, at::kDouble);  // exp(800) = inf
  for (Method m : {Method::Ibp, Method::Crown, Method::AlphaCrown}) {
    BoundOptions o;
    o.method = m;
    BoundsResult r = compute_bounds(g, lo, hi, o);
    EXPECT_FALSE(at::isnan(r.lower).any().item<bool>()) << method_name(m);
    EXPECT_FALSE(at::isnan(r.upper).any().item<bool>()) << method_name(m);
  }
}

TEST(LirpaNanBounds, VerificationNeverProvesThroughANan) {
  Graph g = overflowing_net();
  // the unsafe region y >= y(x0) - 1 holds at x0 = (0, 0): the property is sat
  at::Tensor y0 = g.forward(at::zeros({1, 2}, at::kDouble), at::kDouble);
  std::string t = "(declare-const X_0 Real)\n(declare-const X_1 Real)\n(declare-const Y_0 Real)\n"
                  "(assert (>= X_0 0))\n(assert (<= X_0 800))\n(assert (>= X_1 0))\n(assert (<= X_1 800))\n"
                  "(assert (>= Y_0 " + std::to_string(y0.item<double>() - 1) + "))\n";
  VerifyOptions o;
  o.timeout = 20;
  o.attack.enabled = false;  // leave the answer to the bounds and the search
  o.bab.split = SplitKind::Relu;
  VerifyResult r = verify(g, parse_vnnlib(t), o);
  EXPECT_NE(r.verdict, Verdict::Unsat) << r.reason;
}

}  // namespace
}  // namespace tessera::lirpa
