// CROWN bounds of the element-wise non-linear operators and the reductions on tiny graphs,
// worked out by hand in float64: y = f(x1) - f(x2) on a box, so that the lower bound reads
// f's lower line on x1 and its upper line on x2 (and the upper bound the reverse).

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/onnx_builder.h"

namespace tessera::lirpa {
namespace {

/// y = f(x1) - f(x2) for x [1, 2] (Pow with the exponent 2).
Graph difference_of(const std::string& op) {
  OnnxBuilder b("x", {1, 2});
  std::string fx = op == "Pow" ? b.node("Pow", {b.input(), b.constant("two", at::full({}, 2.0, at::kDouble))})
                               : b.node(op, {b.input()});
  b.set_output(b.node("MatMul", {fx, b.constant("w", at::tensor({1.0, -1.0}, at::kDouble).reshape({2, 1}))}));
  return load_onnx_bytes(b.bytes());
}

BoundsResult bounds(const Graph& g, std::vector<double> lo, std::vector<double> hi, Method m = Method::Crown) {
  BoundOptions o;
  o.method = m;
  return compute_bounds(g, at::tensor(lo, at::kDouble), at::tensor(hi, at::kDouble), o);
}

// Exp, x1 in [0, 1], x2 in [-1, 1]. Lower: tangent at t1 = min(0.5, 0 + 0.99) = 0.5,
// e^0.5 (1 + x1 - 0.5), least at x1 = 0: 0.5 e^0.5; chord of x2 through (-1, e^-1) and
// (1, e), largest at x2 = 1: e  =>  0.5 e^0.5 - e.
// Upper: chord of x1, largest e; tangent of x2 at t2 = min(0, -1 + 0.99) = -0.01,
// e^-0.01 (1 + x2 + 0.01), least at x2 = -1: 0.01 e^-0.01  =>  e - 0.01 e^-0.01.
TEST(LirpaNonlinearHand, ExpChordAndTangent) {
  BoundsResult r = bounds(difference_of("Exp"), {0, -1}, {1, 1});
  EXPECT_NEAR(r.lower.item<double>(), 0.5 * std::exp(0.5) - std::exp(1.0), 1e-12);
  EXPECT_NEAR(r.upper.item<double>(), std::exp(1.0) - 0.01 * std::exp(-0.01), 1e-12);
}

// alpha-CROWN moves x1's tangent point to 0, where the tangent 1 + x1 is exact at the
// minimiser x1 = 0: the lower bound approaches the true minimum 1 - e.
TEST(LirpaNonlinearHand, ExpAlphaMovesTheTangent) {
  Graph g = difference_of("Exp");
  BoundsResult crown = bounds(g, {0, -1}, {1, 1});
  BoundsResult alpha = bounds(g, {0, -1}, {1, 1}, Method::AlphaCrown);
  EXPECT_GT(alpha.lower.item<double>(), crown.lower.item<double>() + 0.1);
  EXPECT_LE(alpha.lower.item<double>(), 1 - std::exp(1.0) + 1e-12);
}

// Reciprocal, x1 in [1, 2], x2 in [1, 4]. Lower: tangent of x1 at 1.5, (3 - x1) / 2.25,
// least at 2: 1 / 2.25; chord of x2, (5 - x2) / 4, largest at 1: 1  =>  1/2.25 - 1.
// Upper: chord of x1, (3 - x1) / 2, largest at 1: 1; tangent of x2 at 2.5, (5 - x2) / 6.25,
// least at 4: 0.16  =>  1 - 0.16 = 0.84.
TEST(LirpaNonlinearHand, ReciprocalChordAndTangent) {
  BoundsResult r = bounds(difference_of("Reciprocal"), {1, 1}, {2, 4});
  EXPECT_NEAR(r.lower.item<double>(), 1 / 2.25 - 1, 1e-12);
  EXPECT_NEAR(r.upper.item<double>(), 0.84, 1e-12);
}

// Sqrt, x1 in [0, 4], x2 in [1, 9]. Lower: chord of x1, x1 / 2, least 0; tangent of x2 at
// the middle of [max(1, 9e-4), 9] = 5, sqrt5 + (x2 - 5) / (2 sqrt5), largest at 9:
// sqrt5 + 2 / sqrt5 = 7 / sqrt5  =>  -7 / sqrt5.
// Upper: tangent of x1 at the middle of [max(0, 4e-4), 4], t = 2.0002, largest at 4:
// sqrt(t) + (4 - t) / (2 sqrt(t)); chord of x2, 1 + (x2 - 1) / 4, least 1.
TEST(LirpaNonlinearHand, SqrtChordAndTangent) {
  BoundsResult r = bounds(difference_of("Sqrt"), {0, 1}, {4, 9});
  const double t = 2.0002;
  EXPECT_NEAR(r.lower.item<double>(), -7 / std::sqrt(5.0), 1e-12);
  EXPECT_NEAR(r.upper.item<double>(), std::sqrt(t) + (4 - t) / (2 * std::sqrt(t)) - 1, 1e-12);
}

// Pow 2, x1 in [-1, 2], x2 in [1, 3]. Lower: tangent of x1 at 0.5, x1 - 0.25, least -1.25;
// chord of x2, 4 x2 - 3, largest 9  =>  -10.25.
// Upper: chord of x1, x1 + 2, largest 4; tangent of x2 at 2, 4 x2 - 4, least 0  =>  4.
TEST(LirpaNonlinearHand, SquareChordAndTangent) {
  BoundsResult r = bounds(difference_of("Pow"), {-1, 1}, {2, 3});
  EXPECT_NEAR(r.lower.item<double>(), -10.25, 1e-12);
  EXPECT_NEAR(r.upper.item<double>(), 4.0, 1e-12);
}

// Erf, x1 in [0, 1] (concave: chord below, tangent at 0.5 above), x2 in [-1, 0] (convex:
// tangent at -0.5 below, chord above). Lower: chord of x1 least at 0: 0; chord of x2
// largest at 0: 0  =>  0. Upper: tangent of x1 largest at 1: erf(0.5) + 0.5 erf'(0.5);
// tangent of x2 least at -1: -(erf(0.5) + 0.5 erf'(0.5))  =>  2 (erf(0.5) + 0.5 erf'(0.5)),
// erf'(x) = 2 / sqrt(pi) e^(-x^2).
TEST(LirpaNonlinearHand, ErfChordAndTangent) {
  BoundsResult r = bounds(difference_of("Erf"), {0, -1}, {1, 0});
  const double d = 2 / std::sqrt(M_PI) * std::exp(-0.25);
  EXPECT_NEAR(r.lower.item<double>(), 0.0, 1e-12);
  EXPECT_NEAR(r.upper.item<double>(), 2 * (std::erf(0.5) + 0.5 * d), 1e-12);
}

// Gelu g(x) = x Phi(x), x1 in [-3, 1], x2 in [-1, 2.5]: both lines of x_i take the chord's
// slope k_i and the extremes of h_i(x) = g(x) - k_i x as intercepts, here from a float64 grid
// of 2 10^6 points per interval (within 0.4 (4 / 2e6)^2 < 2e-12 of the extremes).
// Lower = min(k1 x1) + min h1 - max(k2 x2) - max h2; upper = max(k1 x1) + max h1 - min(k2 x2) - min h2.
TEST(LirpaNonlinearHand, GeluParallelLinesMatchAGrid) {
  auto g = [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); };
  struct Lines {
    double k, hmin, hmax, kmin, kmax;  // slope, extremes of h, extremes of k x
  };
  auto lines = [&](double l, double u) {
    Lines r{(g(u) - g(l)) / (u - l), INFINITY, -INFINITY, 0, 0};
    const int n = 2000000;
    for (int i = 0; i <= n; ++i) {
      double x = l + (u - l) * i / n, h = g(x) - r.k * x;
      r.hmin = std::min(r.hmin, h);
      r.hmax = std::max(r.hmax, h);
    }
    r.kmin = std::min(r.k * l, r.k * u);
    r.kmax = std::max(r.k * l, r.k * u);
    return r;
  };
  Lines a = lines(-3, 1), b = lines(-1, 2.5);
  BoundsResult r = bounds(difference_of("Gelu"), {-3, -1}, {1, 2.5});
  EXPECT_NEAR(r.lower.item<double>(), a.kmin + a.hmin - b.kmax - b.hmax, 1e-9);
  EXPECT_NEAR(r.upper.item<double>(), a.kmax + a.hmax - b.kmin - b.hmin, 1e-9);
}

// y = g(x[0, :]) - 2 g(x[1, :]) for x in [0, 1]^(2 x 3): ReduceMean g gives [-2, 1],
// ReduceSum [-6, 3], exactly, in every method.
TEST(LirpaNonlinearHand, ReductionsAreExact) {
  for (const char* op : {"ReduceMean", "ReduceSum"}) {
    OnnxBuilder b("x", {1, 2, 3});
    auto red = b.node(op, {b.input()}, {OnnxAttr::list("axes", {2}), OnnxAttr::integer("keepdims", 0)});
    b.set_output(b.node("MatMul", {red, b.constant("w", at::tensor({1.0, -2.0}, at::kDouble).reshape({2, 1}))}));
    Graph g = load_onnx_bytes(b.bytes());
    const double n = std::string(op) == "ReduceSum" ? 3.0 : 1.0;
    for (Method m : {Method::Ibp, Method::Crown, Method::AlphaCrown}) {
      BoundsResult r = bounds(g, std::vector<double>(6, 0.0), std::vector<double>(6, 1.0), m);
      EXPECT_NEAR(r.lower.item<double>(), -2 * n, 1e-12) << op << " " << method_name(m);
      EXPECT_NEAR(r.upper.item<double>(), n, 1e-12) << op << " " << method_name(m);
    }
  }
}

}  // namespace
}  // namespace tessera::lirpa
