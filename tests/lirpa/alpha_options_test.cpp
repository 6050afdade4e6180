// alpha-CROWN's options beyond auto_LiRPA's defaults: intermediate bounds intersected with
// CROWN's (BoundOptions::intersect_ibp), final-rows-only optimisation
// (AlphaOptions::intermediate = false) and per-row targets (AlphaOptions::target). Each is
// checked on random networks against CROWN and sampled points; the intersection also on the
// shared VNN-COMP ViT, where alpha-CROWN's intermediate bounds without it start looser than
// CROWN's intersected ones (skipped without the shared data). A full run started from a
// final-rows run's best parameters (AlphaOptions::final_start, as verify's incomplete stage
// does) gives that run's bound at its first step, on the random networks and the shared ViT.

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

// Verify's stages on one box: final rows only (5 steps), then the full run from their best
// parameters with `full_steps` steps. Returns {CROWN, final rows, full}.
std::vector<BoundsResult> staged(const Graph& g, const at::Tensor& lo, const at::Tensor& hi, const at::Tensor& c,
                                 int full_steps) {
  BoundOptions o;
  o.intersect_ibp = true;
  o.keep_intermediate = true;
  o.want_upper = false;
  BoundsResult crown = compute_bounds(g, lo, hi, o, c);
  o.method = Method::AlphaCrown;
  o.alpha.iterations = 5;
  o.alpha.intermediate = false;
  o.known_intermediate = &crown.intermediate;
  BoundsResult final_rows = compute_bounds(g, lo, hi, o, c);
  o.alpha.iterations = full_steps;
  o.alpha.intermediate = true;
  o.known_intermediate = &final_rows.intermediate;
  o.alpha.final_start = final_rows.final_alpha;
  BoundsResult full = compute_bounds(g, lo, hi, o, c);
  return {crown, final_rows, full};
}

void expect_starts_from_final_rows(const std::vector<BoundsResult>& r, const std::string& what) {
  const at::Tensor &crown = r[0].lower, &final_rows = r[1].lower, &first = r[2].lower;
  ASSERT_FALSE(r[1].final_alpha.empty()) << what << ": no parameters handed back";
  // the final rows' steps tightened something: starting from CROWN's slopes would lose it
  EXPECT_TRUE((final_rows > crown + 1e-6).any().item<bool>()) << what << ": the final rows moved nothing: no test";
  // the full run's first step: the final rows' best (the same passes on the same parameters)
  EXPECT_TRUE(at::allclose(first, final_rows, 1e-9, 1e-9)) << what << ": first step " << first << " vs final rows "
                                                             << final_rows;
}

TEST(LirpaAlphaOptions, FullRunStartsFromTheFinalRowsBest) {
  int with_parameters = 0;
  for (const std::string& onnx : networks()) {
    Graph g = load_onnx_bytes(onnx);
    Box b = box_of(g, 0.4);
    at::Tensor y = g.forward(b.x, at::kDouble).reshape({b.x.size(0), -1});
    at::Tensor c = at::randn({3, y.size(1)}, at::kDouble);
    std::vector<BoundsResult> first = staged(g, b.lo, b.hi, c, 0);
    if (first[1].final_alpha.empty()) continue;  // nothing to optimise (the Sigmoid MLP: no alpha)
    ++with_parameters;
    expect_starts_from_final_rows(first, "network " + std::to_string(with_parameters));
    // steps from there: never below the start (the best is kept), every sample inside
    std::vector<BoundsResult> r = staged(g, b.lo, b.hi, c, 3);
    EXPECT_TRUE((r[2].lower >= r[1].lower - 1e-9).all().item<bool>());
    EXPECT_TRUE((at::matmul(y, c.t()) >= r[2].lower.unsqueeze(0) - 1e-9).all().item<bool>()) << "a sample below";
  }
  EXPECT_EQ(with_parameters, 3);  // the CNN, the residual network and the ReLU MLP
}

TEST(LirpaAlphaOptions, SharedVitFullRunStartsFromTheFinalRowsBest) {
  const std::string vit = std::string(TESSERA_SHARED_DATA) + "/vnncomp2023/vit/";
  if (!std::filesystem::exists(vit + "pgd_2_3_16.onnx")) GTEST_SKIP() << "no shared data at " << vit;
  Graph g = load_onnx(vit + "pgd_2_3_16.onnx");
  const PropertyCase box = load_vnnlib(vit + "pgd_2_3_16_1159.vnnlib").cases.at(0);
  const at::Tensor c = box.spec_matrix();
  expect_starts_from_final_rows(staged(g, box.lower, box.upper, c, 0), "ViT 1159");
  // one full step from there: sound (samples, half on the box's corners) and no looser
  at::manual_seed(11);
  at::Tensor t = at::rand({400, box.lower.numel()}, at::kDouble);
  t.slice(0, 0, 200).round_();
  at::Tensor x = box.lower + (box.upper - box.lower) * t;
  std::vector<int64_t> shape{x.size(0)};
  for (int64_t d : g.input_shape()) shape.push_back(d);
  at::Tensor cy = at::matmul(g.forward(x.reshape(shape), at::kDouble).reshape({x.size(0), -1}), c.t());
  std::vector<BoundsResult> r = staged(g, box.lower, box.upper, c, 1);
  EXPECT_TRUE((r[2].lower >= r[1].lower - 1e-9).all().item<bool>()) << r[2].lower << " vs " << r[1].lower;
  EXPECT_TRUE((cy >= r[2].lower.unsqueeze(0) - 1e-9).all().item<bool>()) << "a sample below its lower bound";
}

}  // namespace
}  // namespace tessera::lirpa
