// alpha-CROWN's options beyond auto_LiRPA's defaults: intermediate bounds intersected with
// CROWN's (BoundOptions::intersect_ibp), final-rows-only optimisation
// (AlphaOptions::intermediate = false) and per-row targets (AlphaOptions::target). Each is
// checked on random networks against CROWN and sampled points; the intersection also on the
// shared VNN-COMP ViT, where alpha-CROWN's intermediate bounds without it start looser than
// CROWN's intersected ones (skipped without the shared data).

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "random_nets.h"
#include "tessera/core/error.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::lirpa {
namespace {

using testing::node_values;

std::vector<std::string> networks() {
  at::manual_seed(23);
  return {testing::random_cnn("MaxPool"), testing::random_residual(4), testing::random_mlp(6, {12, 12}, 3, "Sigmoid"),
          testing::random_mlp(5, {16, 16, 16}, 4, "Relu")};
}

struct Box {
  at::Tensor lo, hi, x;  // the box and points in it (uniform, then vertices)
};

Box box_of(const Graph& g, double radius) {
  at::Tensor x0 = at::randn({g.input_size()}, at::kDouble) * 0.5;
  Box b{x0 - radius, x0 + radius, {}};
  b.x = at::cat({b.lo + (b.hi - b.lo) * at::rand({2000, b.lo.numel()}, at::kDouble),
                 at::where(at::rand({200, b.lo.numel()}, at::kDouble) > 0.5, b.hi, b.lo)});
  return b;
}

void expect_contains(const BoundsResult& r, const at::Tensor& y, const std::string& what) {
  EXPECT_TRUE((y >= r.lower.unsqueeze(0) - 1e-9).all().item<bool>()) << what << ": a sample below its lower bound";
  EXPECT_TRUE((y <= r.upper.unsqueeze(0) + 1e-9).all().item<bool>()) << what << ": a sample above its upper bound";
}

TEST(LirpaAlphaOptions, IntersectedIntermediateBoundsNeverLooserThanCrown) {
  for (const std::string& onnx : networks()) {
    Graph g = load_onnx_bytes(onnx);
    Box b = box_of(g, 0.4);
    at::Tensor y = g.forward(b.x, at::kDouble).reshape({b.x.size(0), -1});
    BoundOptions o;
    o.intersect_ibp = true;
    o.keep_intermediate = true;
    BoundsResult crown = compute_bounds(g, b.lo, b.hi, o);
    o.method = Method::AlphaCrown;
    for (int steps : {0, 5}) {
      o.alpha.iterations = steps;
      BoundsResult alpha = compute_bounds(g, b.lo, b.hi, o);
      expect_contains(alpha, y, "alpha-CROWN");
      EXPECT_TRUE((alpha.lower >= crown.lower - 1e-9).all().item<bool>()) << steps << " steps: lower looser than CROWN";
      EXPECT_TRUE((alpha.upper <= crown.upper + 1e-9).all().item<bool>()) << steps << " steps: upper looser than CROWN";
    }
  }
}

TEST(LirpaAlphaOptions, FinalRowsOnlyKeepCrownsIntermediateBounds) {
  for (const std::string& onnx : networks()) {
    Graph g = load_onnx_bytes(onnx);
    Box b = box_of(g, 0.3);
    std::vector<at::Tensor> v = node_values(g, b.x);
    at::Tensor y = v[g.output_id()].reshape({b.x.size(0), -1});
    BoundOptions o;
    o.keep_intermediate = true;
    BoundsResult crown = compute_bounds(g, b.lo, b.hi, o);
    o.method = Method::AlphaCrown;
    o.alpha.iterations = 5;
    o.alpha.intermediate = false;
    BoundsResult final_only = compute_bounds(g, b.lo, b.hi, o);
    expect_contains(final_only, y, "final-rows alpha-CROWN");
    EXPECT_TRUE((final_only.lower >= crown.lower - 1e-9).all().item<bool>());
    EXPECT_TRUE((final_only.upper <= crown.upper + 1e-9).all().item<bool>());
    ASSERT_EQ(final_only.intermediate.size(), crown.intermediate.size());
    for (const auto& [p, c] : crown.intermediate) {  // nothing but the final rows moved
      EXPECT_TRUE(at::equal(final_only.intermediate.at(p).lower, c.lower)) << "node " << p;
      EXPECT_TRUE(at::equal(final_only.intermediate.at(p).upper, c.upper)) << "node " << p;
    }
  }
}

TEST(LirpaAlphaOptions, RowsAboveTheirTargetsStopTheSteps) {
  Graph g = load_onnx_bytes(testing::random_mlp(5, {16, 16, 16}, 4, "Relu"));
  Box b = box_of(g, 0.4);
  BoundOptions o;
  o.want_upper = false;
  BoundsResult crown = compute_bounds(g, b.lo, b.hi, o);
  o.method = Method::AlphaCrown;
  o.alpha.iterations = 5;
  o.alpha.early_stop_patience = 100;
  BoundsResult untargeted = compute_bounds(g, b.lo, b.hi, o);
  EXPECT_EQ(untargeted.iterations, 5);
  EXPECT_TRUE((untargeted.lower > crown.lower + 1e-9).any().item<bool>()) << "the steps tighten nothing: no test";
  // every row above its target from the first pass (CROWN's slopes): no step is taken
  o.alpha.target = crown.lower - 1.0;
  BoundsResult reached = compute_bounds(g, b.lo, b.hi, o);
  EXPECT_EQ(reached.iterations, 0);
  EXPECT_TRUE(at::allclose(reached.lower, crown.lower, 0, 1e-12));
  // a target no row reaches: the same steps as without targets
  o.alpha.target = crown.lower + 1e9;
  EXPECT_TRUE(at::equal(compute_bounds(g, b.lo, b.hi, o).lower, untargeted.lower));
  o.alpha.target = at::zeros({3}, at::kDouble);
  EXPECT_THROW(compute_bounds(g, b.lo, b.hi, o), Error);  // one target per row
}

TEST(LirpaAlphaOptions, SharedVitAlphaStartsFromTheIntersectedCrownBounds) {
  const std::string vit = std::string(TESSERA_SHARED_DATA) + "/vnncomp2023/vit/";
  if (!std::filesystem::exists(vit + "pgd_2_3_16.onnx")) GTEST_SKIP() << "no shared data at " << vit;
  Graph g = load_onnx(vit + "pgd_2_3_16.onnx");
  Property property = load_vnnlib(vit + "pgd_2_3_16_1159.vnnlib");
  const PropertyCase& box = property.cases.at(0);
  BoundOptions o;
  o.intersect_ibp = true;
  o.want_upper = false;
  BoundsResult crown = compute_bounds(g, box.lower, box.upper, o, box.spec_matrix());
  o.method = Method::AlphaCrown;
  o.alpha.iterations = 0;  // the first pass only: CROWN's slopes (before: row 0 -0.580, CROWN's -0.448)
  BoundsResult alpha = compute_bounds(g, box.lower, box.upper, o, box.spec_matrix());
  EXPECT_TRUE(at::allclose(alpha.lower, crown.lower, 1e-9, 1e-9)) << alpha.lower << " vs CROWN " << crown.lower;
}

}  // namespace
}  // namespace tessera::lirpa
