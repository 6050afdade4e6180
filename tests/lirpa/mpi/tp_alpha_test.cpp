// alpha-CROWN under tensor parallelism (slopes sharded with the column layers' neurons,
// gradients across ranks by differentiable all-reduces): where every intermediate bound it
// needs is optimised as one process does (one zone, or one zone + a replicated layer: no
// column layer after the first) it is the single-process alpha-CROWN with the same options
// up to the order of sums, asserted 1e-6 relative; on every model it is sound by sampling, at
// least as tight as TP CROWN, and the same on every rank. At 1, 2 and 4 ranks.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <iostream>

#include "lirpa/mpi/shard_checks.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/mlp_builder.h"
#include "tessera/lirpa/tensor_parallel.h"

namespace tessera::lirpa {
namespace {

using testing::Box;
using testing::seeded_layers;
using testing::box;
using testing::expect_same_on_every_rank;
using testing::expect_sound;
using testing::rel_difference;

BoundOptions with(Method m, bool separate_sides = true) {
  BoundOptions o;
  o.method = m;
  o.alpha.separate_sides = separate_sides;
  return o;
}

/// alpha within CROWN's bounds (it starts from CROWN's slopes and keeps the best), and
/// (`gain`: a model with unstable neurons) strictly tighter in total.
void expect_tighter(const BoundsResult& alpha, const BoundsResult& crown, const std::string& what, bool gain = true) {
  const double tol = 1e-9 * (1 + crown.upper.abs().max().item<double>() + crown.lower.abs().max().item<double>());
  EXPECT_TRUE((alpha.lower >= crown.lower - tol).all().item<bool>()) << what << ": lower bound below CROWN's";
  EXPECT_TRUE((alpha.upper <= crown.upper + tol).all().item<bool>()) << what << ": upper bound above CROWN's";
  if (!gain) return;
  const double narrower = ((crown.upper - crown.lower) - (alpha.upper - alpha.lower)).sum().item<double>();
  EXPECT_GT(narrower, 1e-6) << what << ": alpha-CROWN did not tighten any bound";
}

class TpAlphaMatches : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(TpAlphaMatches, IsTheSingleProcessAlphaCrown) {
  auto comm = dist::world();
  const auto sizes = GetParam();
  Graph whole = build_relu_mlp(sizes, seeded_layers(21), std::make_shared<LocalParamStore>());
  TpNetwork tp = tp_relu_mlp(sizes, seeded_layers(21), comm);
  Box b = box(sizes.front(), 0.15);
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(4);
  at::Tensor c = at::randn({3, sizes.back()}, gen, at::kDouble);
  for (const at::Tensor& spec : {at::Tensor(), c})
    for (bool separate : {true, false}) {
      const std::string what =
          std::string(spec.defined() ? "spec" : "outputs") + (separate ? ", separate sides" : ", joint");
      BoundsResult one = compute_bounds(whole, b.lo, b.hi, with(Method::AlphaCrown, separate), spec);
      BoundsResult many = tp_compute_bounds(tp, b.lo, b.hi, with(Method::AlphaCrown, separate), spec);
      BoundsResult crown = tp_compute_bounds(tp, b.lo, b.hi, with(Method::Crown), spec);
      const double diff = rel_difference(one, many);
      if (comm->rank() == 0)
        std::cout << "[tp alpha, " << sizes.size() - 1 << " layers] " << what << " at P = " << comm->size()
                  << ": relative difference to one process " << diff << "\n";
      EXPECT_LT(diff, 1e-6) << what << " at " << comm->size() << " ranks";
      EXPECT_EQ(many.iterations, one.iterations) << what;
      expect_tighter(many, crown, what);
      expect_sound(whole, many, b.lo, b.hi, spec, what);
      expect_same_on_every_rank(many.lower, *comm);
      expect_same_on_every_rank(many.upper, *comm);
    }
}

INSTANTIATE_TEST_SUITE_P(Mlps, TpAlphaMatches,
                         ::testing::Values(std::vector<int64_t>{12, 40, 5}, std::vector<int64_t>{16, 61, 7},
                                           std::vector<int64_t>{10, 32, 24, 4}));  // zone + replicated layer

class TpAlphaSound : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(TpAlphaSound, TighterThanCrownAndSound) {
  // Several zones: the bounds of a column layer after the first stay TP CROWN's, where one
  // process also optimises them; the difference to one process is printed, not asserted.
  auto comm = dist::world();
  const auto sizes = GetParam();
  Graph whole = build_relu_mlp(sizes, seeded_layers(5), std::make_shared<LocalParamStore>());
  TpNetwork tp = tp_relu_mlp(sizes, seeded_layers(5), comm);
  Box b = box(sizes.front(), 0.1);
  BoundsResult crown = tp_compute_bounds(tp, b.lo, b.hi, with(Method::Crown));
  BoundsResult alpha = tp_compute_bounds(tp, b.lo, b.hi, with(Method::AlphaCrown));
  BoundsResult one = compute_bounds(whole, b.lo, b.hi, with(Method::AlphaCrown));
  if (comm->rank() == 0)
    std::cout << "[tp alpha, " << sizes.size() - 1 << " layers] P = " << comm->size()
              << ": relative difference to one process's alpha-CROWN " << rel_difference(one, alpha)
              << ", width sum " << (alpha.upper - alpha.lower).sum().item<double>() << " (one process "
              << (one.upper - one.lower).sum().item<double>() << ", TP CROWN "
              << (crown.upper - crown.lower).sum().item<double>() << ")\n";
  expect_tighter(alpha, crown, "alpha vs crown", sizes[1] > 3);  // 3 neurons: none unstable
  expect_sound(whole, alpha, b.lo, b.hi, {}, "tp alpha-crown");
  expect_same_on_every_rank(alpha.lower, *comm);
  expect_same_on_every_rank(alpha.upper, *comm);
  // zone-local intermediate bounds: sound as well
  TpOptions local;
  local.local_intermediate = true;
  expect_sound(whole, tp_compute_bounds(tp, b.lo, b.hi, with(Method::AlphaCrown), {}, local), b.lo, b.hi, {},
               "tp alpha-crown, local intermediate bounds");
}

INSTANTIATE_TEST_SUITE_P(Mlps, TpAlphaSound,
                         ::testing::Values(std::vector<int64_t>{10, 3, 4},           // a rank without neurons at P=4
                                           std::vector<int64_t>{10, 32, 24, 4},      // zone + replicated layer
                                           std::vector<int64_t>{10, 30, 30, 30, 4},  // two zones
                                           std::vector<int64_t>{6, 20, 20, 20, 20, 20, 3}));

TEST(TpAlphaCnn, OneZoneMatchesAndTwoZonesAreSound) {
  auto comm = dist::world();
  // conv (column by channels) -> ReLU -> Flatten+Linear (row): one zone
  Graph g = build_relu_cnn({2, 6, 6}, {6}, {1}, 5, 11);
  TpNetwork tp = tp_from_graph(g, comm);
  Box b = box(g.input_size(), 0.05);
  BoundsResult one = compute_bounds(g, b.lo, b.hi, with(Method::AlphaCrown));
  BoundsResult many = tp_compute_bounds(tp, b.lo, b.hi, with(Method::AlphaCrown));
  EXPECT_LT(rel_difference(one, many), 1e-6) << "one-zone CNN at " << comm->size() << " ranks";
  expect_tighter(many, tp_compute_bounds(tp, b.lo, b.hi, with(Method::Crown)), "one-zone CNN");
  expect_sound(g, many, b.lo, b.hi, {}, "one-zone CNN", 3000);
  // two zones (conv/conv, conv/Flatten+Linear), 3 channels: one rank has none at P = 4
  Graph g2 = build_relu_cnn({2, 8, 8}, {4, 6, 3}, {1, 2, 1}, 3, 11);
  TpNetwork tp2 = tp_from_graph(g2, comm);
  Box b2 = box(g2.input_size(), 0.02);
  BoundsResult alpha2 = tp_compute_bounds(tp2, b2.lo, b2.hi, with(Method::AlphaCrown));
  expect_sound(g2, alpha2, b2.lo, b2.hi, {}, "two-zone CNN", 3000);
  expect_same_on_every_rank(alpha2.lower, *comm);
}

TEST(TpAlphaOptions, LowerOnlyAndStopKeepCrownSemantics) {
  auto comm = dist::world();
  const std::vector<int64_t> sizes{12, 40, 5};
  TpNetwork tp = tp_relu_mlp(sizes, seeded_layers(21), comm);
  Box b = box(12, 0.15);
  BoundsResult crown = tp_compute_bounds(tp, b.lo, b.hi, with(Method::Crown));
  BoundOptions o = with(Method::AlphaCrown);
  o.want_upper = false;
  BoundsResult lower_only = tp_compute_bounds(tp, b.lo, b.hi, o);
  EXPECT_TRUE(at::isinf(lower_only.upper).all().item<bool>());
  EXPECT_TRUE(at::allclose(lower_only.lower, tp_compute_bounds(tp, b.lo, b.hi, with(Method::AlphaCrown)).lower, 0, 0));
  // stop at once (on rank 0 only: every rank must follow): CROWN's bounds, no step taken
  o = with(Method::AlphaCrown);
  const int rank = comm->rank();
  o.alpha.stop = [rank] { return rank == 0; };
  BoundsResult stopped = tp_compute_bounds(tp, b.lo, b.hi, o);
  EXPECT_EQ(stopped.iterations, 0);
  EXPECT_LT(rel_difference(crown, stopped), 1e-12);
}

}  // namespace
}  // namespace tessera::lirpa
