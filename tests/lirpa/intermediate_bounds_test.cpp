// Intermediate bounds handed between runs (BoundOptions::keep_intermediate and
// known_intermediate): what one run returns holds every sampled point's node values, is at
// least as tight as CROWN's, and a run given them bounds exactly as the run that computed them.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "random_nets.h"
#include "tessera/core/error.h"

namespace tessera::lirpa {
namespace {

using testing::node_values;

std::vector<std::string> networks() {
  at::manual_seed(21);
  return {testing::random_cnn("MaxPool"), testing::random_conv_chain(), testing::random_residual(4),
          testing::random_mlp(6, {12, 12}, 3, "Sigmoid")};
}

TEST(LirpaIntermediateBounds, HoldSampledPointsAndAlphaTightensCrown) {
  for (const std::string& onnx : networks()) {
    Graph g = load_onnx_bytes(onnx);
    at::Tensor x0 = at::randn({g.input_size()}, at::kDouble) * 0.5;
    at::Tensor lo = x0 - 0.3, hi = x0 + 0.3;
    at::Tensor x = at::cat({lo + (hi - lo) * at::rand({3000, lo.numel()}, at::kDouble),
                            at::where(at::rand({300, lo.numel()}, at::kDouble) > 0.5, hi, lo)});
    std::vector<at::Tensor> v = node_values(g, x);
    BoundOptions o;
    o.keep_intermediate = true;
    BoundsResult crown = compute_bounds(g, lo, hi, o);
    o.method = Method::AlphaCrown;
    o.alpha.iterations = 5;
    BoundsResult alpha = compute_bounds(g, lo, hi, o);
    ASSERT_FALSE(crown.intermediate.empty());
    ASSERT_EQ(alpha.intermediate.size(), crown.intermediate.size());
    for (const auto& [p, b] : alpha.intermediate) {
      at::Tensor z = v[p].reshape({x.size(0), -1});
      at::Tensor l = b.lower.reshape({1, -1}), u = b.upper.reshape({1, -1});
      EXPECT_TRUE((z >= l - 1e-9).all().item<bool>()) << "node " << p << " lower bound violated";
      EXPECT_TRUE((z <= u + 1e-9).all().item<bool>()) << "node " << p << " upper bound violated";
      const Interval& c = crown.intermediate.at(p);
      EXPECT_TRUE((b.lower >= c.lower - 1e-12).all().item<bool>()) << "node " << p << ": looser than CROWN";
      EXPECT_TRUE((b.upper <= c.upper + 1e-12).all().item<bool>()) << "node " << p << ": looser than CROWN";
    }
  }
}

TEST(LirpaIntermediateBounds, GivenBoundsAreUsedAsTheyAre) {
  for (const std::string& onnx : networks()) {
    Graph g = load_onnx_bytes(onnx);
    at::Tensor x0 = at::randn({g.input_size()}, at::kDouble) * 0.5;
    at::Tensor lo = x0 - 0.3, hi = x0 + 0.3;
    BoundOptions o;
    o.keep_intermediate = true;
    BoundsResult first = compute_bounds(g, lo, hi, o);
    BoundOptions again = o;
    again.known_intermediate = &first.intermediate;
    BoundsResult second = compute_bounds(g, lo, hi, again);
    EXPECT_TRUE(at::equal(second.lower, first.lower));
    EXPECT_TRUE(at::equal(second.upper, first.upper));
    // looser given bounds (every interval widened) give looser output bounds: they are used
    std::map<int, Interval> wide;
    for (const auto& [p, b] : first.intermediate) wide[p] = Interval{b.lower - 1.0, b.upper + 1.0};
    again.known_intermediate = &wide;
    BoundsResult looser = compute_bounds(g, lo, hi, again);
    EXPECT_TRUE((looser.lower <= first.lower + 1e-12).all().item<bool>());
    EXPECT_TRUE((looser.lower < first.lower - 1e-9).any().item<bool>()) << "the given bounds were not used";
  }
}

TEST(LirpaIntermediateBounds, BoundsForANodeTheNetworkLacksAreRefused) {
  Graph g = load_onnx_bytes(testing::random_conv_chain());
  at::Tensor lo = at::zeros({g.input_size()}, at::kDouble), hi = lo + 0.1;
  std::map<int, Interval> bad{{static_cast<int>(g.nodes().size()) + 3, Interval{lo, hi}}};
  BoundOptions o;
  o.known_intermediate = &bad;
  EXPECT_THROW(compute_bounds(g, lo, hi, o), Error);
}

}  // namespace
}  // namespace tessera::lirpa
