// FSDP: bounds with a ShardedParamStore are bitwise those of the single-process run (IBP,
// CROWN, alpha-CROWN on an MLP, CNNs and a residual net), at 1, 2 and 4 ranks.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <numeric>

#include "lirpa/mpi/shard_checks.h"
#include "lirpa/random_nets.h"
#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/sharded_param_store.h"

namespace tessera::lirpa {
namespace {

using testing::BlockBytes;
using testing::expect_same_on_every_rank;

using Builder = std::string (*)();

std::string mlp() { return testing::random_mlp(6, {24, 24, 16}, 4, "Relu"); }
std::string cnn() { return testing::random_cnn("MaxPool"); }
std::string conv_chain() { return testing::random_conv_chain(); }
std::string residual() { return testing::random_residual(8); }

/// Every rank builds the same network (same seed) and the same box.
std::string same_everywhere(Builder build, int64_t seed) {
  at::manual_seed(seed);
  return build();
}

class ShardedBounds : public ::testing::TestWithParam<std::tuple<Builder, Method>> {};

TEST_P(ShardedBounds, BitwiseIdenticalToOneProcess) {
  auto comm = dist::world();
  auto [build, method] = GetParam();
  std::string bytes = same_everywhere(build, 7);
  Graph whole = load_onnx_bytes(bytes);
  Graph sharded = load_onnx_bytes(bytes);
  auto store = shard_parameters(sharded, comm);
  EXPECT_LE(store->local_bytes(), store->full_bytes());
  at::manual_seed(11);
  at::Tensor centre = at::rand({whole.input_size()}, at::kDouble);
  at::Tensor lo = centre - 0.1, hi = centre + 0.1;
  BoundOptions o;
  o.method = method;
  o.alpha.iterations = 5;
  at::Tensor c = at::randn({3, whole.output_size()}, at::kDouble);
  for (const at::Tensor& spec : {at::Tensor(), c}) {
    BoundsResult one = compute_bounds(whole, lo, hi, o, spec);
    int64_t gathers = store->gather_count();
    BoundsResult many = compute_bounds(sharded, lo, hi, o, spec);
    EXPECT_GT(store->gather_count(), gathers);
    // bitwise: same values in the same order of operations
    EXPECT_TRUE(at::equal(one.lower, many.lower)) << method_name(method) << "\n" << one.lower - many.lower;
    EXPECT_TRUE(at::equal(one.upper, many.upper)) << method_name(method) << "\n" << one.upper - many.upper;
    EXPECT_EQ(one.iterations, many.iterations);
    expect_same_on_every_rank(many.lower, *comm);
  }
}

INSTANTIATE_TEST_SUITE_P(Nets, ShardedBounds,
                         ::testing::Combine(::testing::Values(&mlp, &cnn, &conv_chain, &residual),
                                            ::testing::Values(Method::Ibp, Method::Crown, Method::AlphaCrown)));

TEST(ShardedParamStore, KeepsItsBlockAndGathersTheWhole) {
  auto comm = dist::world();
  const int p = comm->size(), r = comm->rank();
  ShardedParamStore store(comm);
  at::Tensor w = at::arange(7 * 3, at::kDouble).reshape({7, 3});  // 7 rows: unequal last block
  at::Tensor s = at::full({}, 2.5, at::kFloat);                  // a scalar: one row
  at::Tensor shape = at::tensor(std::vector<int64_t>{1, 4}, at::kLong);
  store.put("w", w);
  store.put("s", s);
  store.put("shape", shape);
  auto counts = ShardedParamStore::block_counts(7, p);
  EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), int64_t{0}), 7);
  EXPECT_EQ(counts[0], (7 + p - 1) / p);
  const int64_t expected = counts[r] * 3 * 8 + (r == 0 ? 4 : 0) + ShardedParamStore::block_counts(2, p)[r] * 8;
  EXPECT_EQ(store.local_bytes(), expected);
  EXPECT_EQ(store.full_bytes(), 21 * 8 + 4 + 16);
  EXPECT_TRUE(at::equal(store.get_raw("w"), w));
  EXPECT_TRUE(at::equal(store.get("w", at::kFloat), w.to(at::kFloat)));
  at::Tensor s64 = store.get("s", at::kDouble);
  EXPECT_EQ(s64.dim(), 0);
  EXPECT_EQ(s64.item<double>(), 2.5);
  EXPECT_TRUE(at::equal(store.get_raw("shape"), shape));
  // no cache: a get after the last holder let go gathers into new memory...
  const int64_t before = store.gather_count();
  store.get_raw("w");
  store.get_raw("w");
  EXPECT_EQ(store.gather_count(), before + 2);
  // ...while a tensor still held elsewhere (autograd's tape) is handed out again, not copied
  at::Tensor held = store.get_raw("w");
  at::Tensor again = store.get_raw("w");
  EXPECT_EQ(held.data_ptr(), again.data_ptr());
  EXPECT_EQ(store.gather_count(), before + 3);
  EXPECT_TRUE(at::equal(store.get("w", at::kFloat), w.to(at::kFloat)));
  EXPECT_THROW(store.get("nope", at::kDouble), Error);
}

TEST(ShardedParamStore, OneFullWeightAtATimeDuringIbp) {
  // Five 256x256 layers: IBP holds W and |W| of one layer, never all weights at once.
  core::MemoryLedger::install();
  auto comm = dist::world();
  at::manual_seed(3);
  Graph g = load_onnx_bytes(testing::random_mlp(32, {256, 256, 256, 256, 256}, 4, "Relu"));
  auto store = shard_parameters(g, comm);
  const int64_t weight = 256 * 256 * 8;
  at::Tensor lo = at::zeros({32}, at::kDouble), hi = at::ones({32}, at::kDouble);
  BoundOptions o;
  o.method = Method::Ibp;
  core::MemoryPhase phase("ibp");
  compute_bounds(g, lo, hi, o);
  auto rec = phase.finish();
  EXPECT_GT(store->full_bytes(), 4 * weight);
  EXPECT_LT(rec.peak_increase(), 2 * weight + 64 * 1024) << "more than one layer's W, |W| resident";
  EXPECT_LE(rec.end_bytes, rec.baseline_bytes + 64 * 1024) << "gathered weights kept after use";
  const int p = comm->size();
  EXPECT_LE(store->local_bytes(), store->full_bytes() / p + 8 * 1024);
}

TEST(ShardedParamStore, AlphaCrownTapeHoldsEachWeightOnce) {
  // alpha-CROWN's tape keeps the weights it multiplied by; with FSDP that must cost at most
  // the whole weights once (as in one process), not one gathered copy per use.
  core::MemoryLedger::install();
  auto comm = dist::world();
  at::manual_seed(5);
  std::string bytes = testing::random_mlp(16, {128, 128, 128, 128}, 4, "Relu");
  Graph whole = load_onnx_bytes(bytes), sharded = load_onnx_bytes(bytes);
  auto store = shard_parameters(sharded, comm);
  at::Tensor lo = at::zeros({16}, at::kDouble), hi = at::full({16}, 0.5, at::kDouble);
  BoundOptions o;
  o.method = Method::AlphaCrown;
  o.alpha.iterations = 3;
  auto increase = [&](const Graph& g) {
    core::MemoryPhase phase("alpha");
    compute_bounds(g, lo, hi, o);
    return phase.finish().peak_increase();
  };
  const int64_t one = increase(whole), many = increase(sharded);
  EXPECT_LE(many, one + store->full_bytes() + 64 * 1024) << "gathered weights held more than once";
}

TEST(ShardedParamStore, GathersBlocksOfColumnsAndRows) {
  auto comm = dist::world();
  ShardedParamStore store(comm);
  at::Tensor w = at::arange(9 * 5, at::kDouble).reshape({9, 5});  // rows split unequally at P = 2, 4
  store.put("w", w);
  EXPECT_EQ(store.shape("w"), (std::vector<int64_t>{9, 5}));
  for (auto [c0, n] : {std::pair<int64_t, int64_t>{0, 5}, {1, 3}, {4, 1}, {2, 0}}) {
    EXPECT_TRUE(at::equal(store.get_columns("w", at::kFloat, c0, n), w.narrow(1, c0, n).to(at::kFloat)));
  }
  // row ranges inside one rank's block and across every boundary
  for (int64_t r0 = 0; r0 < 9; ++r0) {
    for (int64_t n = 0; r0 + n <= 9; n += 2) {
      EXPECT_TRUE(at::equal(store.get_rows("w", at::kDouble, r0, n), w.narrow(0, r0, n))) << r0 << " " << n;
    }
  }
  EXPECT_THROW(store.get_columns("w", at::kDouble, 3, 3), Error);
  EXPECT_THROW(store.get_rows("w", at::kDouble, -1, 2), Error);
  LocalParamStore local;
  local.put("w", w);
  EXPECT_TRUE(at::equal(local.get_rows("w", at::kDouble, 2, 5), w.narrow(0, 2, 5)));
  EXPECT_TRUE(at::equal(local.get_columns("w", at::kDouble, 1, 2), w.narrow(1, 1, 2)));
}

TEST(ShardedParamStore, WeightsUsedInBlocksKeepTheBitsAndNeverGatherAWholeWeight) {
  // 128 KiB blocks: the 256x256 float64 weights (512 KiB) are used 64 columns or rows at a
  // time, with blocks crossing the ranks' row boundaries. Bounds stay bitwise those of one
  // process (which uses the same blocks), IBP holds one block of W and |W| at a time
  // (whole, it held W and |W|: twice the weight), and alpha-CROWN's tape holds no gathered
  // weight (one process's tape refers to the store's tensors: no copy).
  core::MemoryLedger::install();
  BlockBytes blocks(128 * 1024);
  auto comm = dist::world();
  at::manual_seed(13);
  std::string bytes = testing::random_mlp(40, {256, 256, 200}, 4, "Relu");
  Graph whole = load_onnx_bytes(bytes), sharded = load_onnx_bytes(bytes);
  auto store = shard_parameters(sharded, comm);
  const int64_t weight = 256 * 256 * 8;
  at::Tensor lo = at::zeros({40}, at::kDouble), hi = at::full({40}, 0.3, at::kDouble);
  for (Method m : {Method::Ibp, Method::Crown, Method::AlphaCrown}) {
    BoundOptions o;
    o.method = m;
    o.alpha.iterations = 3;
    core::MemoryPhase one_phase("bounds");
    BoundsResult one = compute_bounds(whole, lo, hi, o);
    const int64_t one_peak = one_phase.finish().peak_increase();
    core::MemoryPhase phase("bounds");
    BoundsResult many = compute_bounds(sharded, lo, hi, o);
    auto rec = phase.finish();
    EXPECT_TRUE(at::equal(one.lower, many.lower)) << method_name(m);
    EXPECT_TRUE(at::equal(one.upper, many.upper)) << method_name(m);
    if (m == Method::Ibp) EXPECT_LT(rec.peak_increase(), weight) << "a whole weight was gathered";
    // alpha-CROWN's tape keeps no gathered weight: its backward gathers the blocks again
    if (m == Method::AlphaCrown) EXPECT_LT(rec.peak_increase(), one_peak + weight / 2) << "weights on the tape";
  }
  // blocks only regroup independent products: the bounds of whole-matrix products agree
  BlockBytes unblocked(int64_t{1} << 40);
  BoundOptions o;
  o.method = Method::Crown;
  BoundsResult blocked_crown = [&] {
    BlockBytes again(128 * 1024);
    return compute_bounds(whole, lo, hi, o);
  }();
  BoundsResult whole_crown = compute_bounds(whole, lo, hi, o);
  EXPECT_TRUE(at::allclose(blocked_crown.lower, whole_crown.lower, 1e-12, 1e-12));
  // the blocked products' own backward gives alpha-CROWN autograd's gradients: same steps
  o.method = Method::AlphaCrown;
  o.alpha.iterations = 5;
  BoundsResult blocked_alpha = [&] {
    BlockBytes again(128 * 1024);
    return compute_bounds(whole, lo, hi, o);
  }();
  BoundsResult whole_alpha = compute_bounds(whole, lo, hi, o);
  EXPECT_TRUE(at::allclose(blocked_alpha.lower, whole_alpha.lower, 1e-9, 1e-9)) << blocked_alpha.lower - whole_alpha.lower;
  EXPECT_TRUE(at::allclose(blocked_alpha.upper, whole_alpha.upper, 1e-9, 1e-9)) << blocked_alpha.upper - whole_alpha.upper;
  EXPECT_FALSE(at::allclose(whole_alpha.lower, whole_crown.lower, 1e-6, 1e-6)) << "alpha-CROWN did not move the bounds";
}

}  // namespace
}  // namespace tessera::lirpa

namespace tessera::lirpa {
namespace {

TEST(ShardedLoading, KeepsBlocksWhileReadingTheModel) {
  // Eight 256x256 layers read straight into a sharded store: one layer's weight is whole at
  // a time while loading (with its float32 and converted float64 copies: a few weights'
  // bytes, independent of the depth), and the bounds are those of a whole load.
  core::MemoryLedger::install();
  auto comm = dist::world();
  at::manual_seed(9);
  std::string bytes = testing::random_mlp(32, {256, 256, 256, 256, 256, 256, 256, 256}, 4, "Relu");
  Graph whole = load_onnx_bytes(bytes);
  const int64_t weight = 256 * 256 * 8;
  core::MemoryPhase phase("load");
  auto store = std::make_shared<ShardedParamStore>(comm);
  Graph sharded = load_onnx_bytes(bytes, "<mlp>", store);
  auto rec = phase.finish();
  EXPECT_GT(store->full_bytes(), 7 * weight);
  EXPECT_LE(store->local_bytes(), store->full_bytes() / comm->size() + 8 * 1024);
  EXPECT_LT(rec.peak_increase(), store->local_bytes() + 4 * weight) << "whole weights held while loading";
  at::Tensor lo = at::zeros({32}, at::kDouble), hi = at::full({32}, 0.2, at::kDouble);
  BoundOptions o;
  o.method = Method::Crown;
  BoundsResult a = compute_bounds(whole, lo, hi, o), b = compute_bounds(sharded, lo, hi, o);
  EXPECT_TRUE(at::equal(a.lower, b.lower));
  EXPECT_TRUE(at::equal(a.upper, b.upper));
}

}  // namespace
}  // namespace tessera::lirpa
