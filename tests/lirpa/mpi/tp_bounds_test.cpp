// Tensor parallelism: TP bounds against the single-process bounds (IBP and single-zone
// CROWN to ~1e-12; multi-zone CROWN equal with cross-zone intermediate bounds, looser but
// sound with local ones), soundness by sampling, the layout (each rank's blocks), the
// ONNX path and its Unsupported errors, at 1, 2 and 4 ranks.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "lirpa/mpi/shard_checks.h"
#include "lirpa/random_nets.h"
#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/mlp_builder.h"
#include "tessera/lirpa/tensor_parallel.h"

namespace tessera::lirpa {
namespace {

using testing::Box;
using testing::seeded_layers;
using testing::box;
using testing::expect_sound;
using testing::rel_difference;

TEST(TpPlan, PairsLinearReluLinearIntoZones) {
  using S = TpSplit;
  EXPECT_EQ(tp_plan({false}), (std::vector<S>{S::Replicated}));
  EXPECT_EQ(tp_plan({true, false}), (std::vector<S>{S::Column, S::Row}));
  EXPECT_EQ(tp_plan({true, true, false}), (std::vector<S>{S::Column, S::Row, S::Replicated}));
  EXPECT_EQ(tp_plan({true, true, true, false}), (std::vector<S>{S::Column, S::Row, S::Column, S::Row}));
}

TEST(TpNetwork, HoldsItsBlocksAndComputesTheForwardPass) {
  auto comm = dist::world();
  const std::vector<int64_t> sizes{9, 13, 6, 7, 3};  // widths not divisible by 2 or 4
  Graph whole = build_relu_mlp(sizes, seeded_layers(1), std::make_shared<LocalParamStore>());
  TpNetwork tp = tp_relu_mlp(sizes, seeded_layers(1), comm);
  ASSERT_EQ(tp.layers().size(), 4u);
  auto [o13, n13] = tp.block(13);
  EXPECT_EQ(tp.layers()[0].weight_t.sizes(), (std::vector<int64_t>{9, n13}));   // column: W[out_r, :]^T
  EXPECT_EQ(tp.layers()[1].weight_t.sizes(), (std::vector<int64_t>{n13, 6}));   // row: W[:, in_r]^T
  at::Tensor n = at::full({1}, n13, at::kLong);
  comm->all_reduce(n, dist::ReduceOp::Sum);
  EXPECT_EQ(n.item<int64_t>(), 13);
  at::Tensor x = at::randn({17, 9}, at::kDouble);
  comm->broadcast(x, 0);
  EXPECT_TRUE(at::allclose(tp.forward(x, at::kDouble), whole.forward(x, at::kDouble), 1e-12, 1e-12));
}

class TpMatches : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(TpMatches, SingleProcessIbpAndCrown) {
  // IBP, and CROWN with cross-zone intermediate bounds, are the single-process arithmetic
  // up to the order of sums; tolerance 1e-9 relative (observed ~1e-15).
  auto comm = dist::world();
  const auto sizes = GetParam();
  Graph whole = build_relu_mlp(sizes, seeded_layers(3), std::make_shared<LocalParamStore>());
  TpNetwork tp = tp_relu_mlp(sizes, seeded_layers(3), comm);
  Box b = box(sizes.front(), 0.05);
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(8);
  at::Tensor c = at::randn({3, sizes.back()}, gen, at::kDouble);
  for (Method m : {Method::Ibp, Method::Crown})
    for (const at::Tensor& spec : {at::Tensor(), c}) {
      BoundOptions o;
      o.method = m;
      BoundsResult one = compute_bounds(whole, b.lo, b.hi, o, spec);
      BoundsResult many = tp_compute_bounds(tp, b.lo, b.hi, o, spec);
      EXPECT_LT(rel_difference(one, many), 1e-9) << method_name(m) << " at " << comm->size() << " ranks";
      expect_sound(whole, many, b.lo, b.hi, spec, method_name(m));
      at::Tensor root = many.lower.clone();
      comm->broadcast(root, 0);
      EXPECT_TRUE(at::equal(root, many.lower)) << "rank " << comm->rank() << " differs from rank 0";
    }
}

INSTANTIATE_TEST_SUITE_P(Mlps, TpMatches,
                         ::testing::Values(std::vector<int64_t>{12, 40, 5},          // one zone
                                           std::vector<int64_t>{10, 3, 4},           // a rank without neurons at P=4
                                           std::vector<int64_t>{10, 32, 24, 4},      // zone + replicated layer
                                           std::vector<int64_t>{10, 30, 30, 30, 4},  // two zones
                                           std::vector<int64_t>{6, 20, 20, 20, 20, 20, 3}));

TEST(TpLocalIntermediate, SoundAndExactOnOneZone) {
  // Zone-local intermediate bounds: sound; on one zone they are CROWN's; on two zones they
  // deviate from single-process CROWN (the bench reports by how much).
  auto comm = dist::world();
  TpOptions local;
  local.local_intermediate = true;
  BoundOptions o;
  o.method = Method::Crown;
  for (auto sizes : {std::vector<int64_t>{12, 40, 5}, std::vector<int64_t>{10, 30, 30, 30, 4}}) {
    Graph whole = build_relu_mlp(sizes, seeded_layers(4), std::make_shared<LocalParamStore>());
    TpNetwork tp = tp_relu_mlp(sizes, seeded_layers(4), comm);
    Box b = box(sizes.front(), 0.1);
    BoundsResult one = compute_bounds(whole, b.lo, b.hi, o);
    BoundsResult many = tp_compute_bounds(tp, b.lo, b.hi, o, {}, local);
    expect_sound(whole, many, b.lo, b.hi, {}, "crown, local intermediate bounds");
    if (sizes.size() == 3) EXPECT_LT(rel_difference(one, many), 1e-9);
  }
}

TEST(TpMemory, EachRankHoldsAndWorksOnItsBlocks) {
  // One wide zone 64 -> 4096 -> 8: weights whole 2.4 MB. A rank holds 1/P of them (plus
  // the second layer's bias). IBP adds its block of |W|; CROWN also the working set of the
  // 16 output rows over its block of hidden neurons (relaxation temporaries, [16, 4096/P]
  // each): observed 3.34 / 1.67 / 0.84 MB at P = 1 / 2 / 4.
  core::MemoryLedger::install();
  auto comm = dist::world();
  const int p = comm->size();
  const std::vector<int64_t> sizes{64, 4096, 8};
  const int64_t whole = (64 * 4096 + 4096 + 4096 * 8 + 8) * 8;
  TpNetwork tp = tp_relu_mlp(sizes, seeded_layers(6), comm);
  EXPECT_LE(tp.local_bytes(), whole / p + 8 * 8 + 2 * 4096 * 8 / p);
  Box b = box(64, 0.01);
  for (Method m : {Method::Ibp, Method::Crown}) {
    BoundOptions o;
    o.method = m;
    core::MemoryPhase phase("tp");
    tp_compute_bounds(tp, b.lo, b.hi, o);
    EXPECT_LE(phase.finish().peak_increase(), 17 * 64 * 4096 * 8 / (10 * p) + 256 * 1024) << method_name(m) << " at P = " << p;
  }
}

TEST(TpMemory, IbpTakesAbsoluteWeightsInBlocks) {
  // With 4 KiB weight blocks, x |W|^T runs 64 columns at a time (the block of |W| is never
  // whole on a rank): same IBP and CROWN bounds as with the whole block, and the IBP peak
  // stays below the rank's block of W (whole, |W| alone was that large).
  core::MemoryLedger::install();
  auto comm = dist::world();
  const std::vector<int64_t> sizes{40, 512, 10};
  TpNetwork tp = tp_relu_mlp(sizes, seeded_layers(8), comm);
  Box b = box(40, 0.05);
  for (Method m : {Method::Ibp, Method::Crown}) {
    BoundOptions o;
    o.method = m;
    BoundsResult whole = tp_compute_bounds(tp, b.lo, b.hi, o);
    testing::BlockBytes blocks(4096);
    core::MemoryPhase phase("tp");
    BoundsResult blocked = tp_compute_bounds(tp, b.lo, b.hi, o);
    const int64_t peak = phase.finish().peak_increase();
    EXPECT_TRUE(at::allclose(whole.lower, blocked.lower, 1e-12, 1e-12)) << method_name(m);
    EXPECT_TRUE(at::allclose(whole.upper, blocked.upper, 1e-12, 1e-12)) << method_name(m);
    if (m == Method::Ibp) EXPECT_LT(peak, 40 * 512 * 8 / comm->size()) << "a whole |W| block at P = " << comm->size();
  }
}

TEST(TpFromGraph, OnnxMlpMatchesAndOtherOperatorsAreUnsupported) {
  auto comm = dist::world();
  at::manual_seed(7);
  Graph g = load_onnx_bytes(testing::random_mlp(6, {24, 24, 16}, 4, "Relu"));
  TpNetwork tp = tp_from_graph(g, comm);
  Box b = box(6, 0.2);
  BoundOptions o;
  o.method = Method::Crown;
  EXPECT_LT(rel_difference(compute_bounds(g, b.lo, b.hi, o), tp_compute_bounds(tp, b.lo, b.hi, o)), 1e-9);
  auto message = [&](const std::string& bytes) {
    Graph other = load_onnx_bytes(bytes);
    try {
      tp_from_graph(other, comm);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(testing::random_cnn("MaxPool")).find("MaxPool"), std::string::npos);
  EXPECT_NE(message(testing::random_mlp(6, {8}, 2, "Sigmoid")).find("Sigmoid"), std::string::npos);
  EXPECT_NE(message(testing::random_residual(8)).find("chains only"), std::string::npos);
}

}  // namespace
}  // namespace tessera::lirpa
