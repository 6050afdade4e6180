// Sharded optimisation state (`--shard fsdp+state`): the rows of every intermediate CROWN
// backward pass, with their A matrices and alpha-CROWN slopes, are split across ranks
// (weights FSDP-sharded as well). CROWN's bounds are bitwise those of one process (each
// row's arithmetic is unchanged); alpha-CROWN sums each slope's gradient over ranks in a
// different order than one process does, so its bounds agree to rounding (asserted 1e-9
// relative). Run at 1, 2 and 4 ranks.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "lirpa/bound_state.h"
#include "lirpa/mpi/shard_checks.h"
#include "lirpa/random_nets.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/sharded_param_store.h"

namespace tessera::lirpa {
namespace {

using testing::expect_same_on_every_rank;

using Builder = std::string (*)();

std::string mlp() { return testing::random_mlp(6, {40, 100, 30}, 4, "Relu"); }
std::string cnn() { return testing::random_cnn("MaxPool"); }
std::string conv_chain() { return testing::random_conv_chain(); }
std::string residual() { return testing::random_residual(8); }

double relative_difference(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs() / (1 + b.abs())).max().item<double>();
}

class ShardedState : public ::testing::TestWithParam<std::tuple<Builder, Method>> {};

TEST_P(ShardedState, MatchesOneProcess) {
  auto comm = dist::world();
  auto [build, method] = GetParam();
  at::manual_seed(7);  // every rank builds the same network and box
  std::string bytes = build();
  Graph whole = load_onnx_bytes(bytes);
  Graph sharded = load_onnx_bytes(bytes);
  if (!std::getenv("NOFSDP")) shard_parameters(sharded, comm);
  at::manual_seed(11);
  at::Tensor centre = at::rand({whole.input_size()}, at::kDouble);
  at::Tensor lo = centre - 0.1, hi = centre + 0.1;
  BoundOptions o;
  o.method = method;
  o.alpha.iterations = 5;
  BoundOptions os = o;
  os.shard_rows = comm;
  at::Tensor c = at::randn({3, whole.output_size()}, at::kDouble);
  for (const at::Tensor& spec : {at::Tensor(), c}) {
    BoundsResult one = compute_bounds(whole, lo, hi, o, spec);
    BoundsResult many = compute_bounds(sharded, lo, hi, os, spec);
    if (method == Method::Crown) {
      // Every row is computed as in one process; whether its products round alike in a
      // block of rows depends on the BLAS kernel: bitwise with OpenBLAS's Haswell and Zen
      // kernels, to ~1e-17 with its AVX-512 (SkylakeX) kernel, which treats small products
      // apart (seen on an AVX-512 EPYC, 2026-12-01).
      EXPECT_LT(relative_difference(many.lower, one.lower), 1e-14) << one.lower - many.lower;
      EXPECT_LT(relative_difference(many.upper, one.upper), 1e-14) << one.upper - many.upper;
    } else {
      EXPECT_LT(relative_difference(many.lower, one.lower), 1e-9) << one.lower - many.lower;
      EXPECT_LT(relative_difference(many.upper, one.upper), 1e-9) << one.upper - many.upper;
    }
    expect_same_on_every_rank(many.lower, *comm);
    expect_same_on_every_rank(many.upper, *comm);
  }
}

INSTANTIATE_TEST_SUITE_P(Nets, ShardedState,
                         ::testing::Combine(::testing::Values(&mlp, &cnn, &conv_chain, &residual),
                                            ::testing::Values(Method::Crown, Method::AlphaCrown)));

TEST(ShardedState, RowBlocksAreAlignedAndCoverEveryRow) {
  auto comm = dist::world();
  const int p = comm->size();
  for (int64_t rows : {0, 2, 10, 16, 34, 100, 4097}) {
    detail::RowBlock b = detail::row_block(rows, comm);
    if (!b.split) {  // one rank, or a block would be empty: every rank takes every row
      EXPECT_TRUE(p == 1 || rows <= 16 * (p - 1)) << rows << " rows kept whole on " << p << " ranks";
      EXPECT_EQ(b.begin, 0);
      EXPECT_EQ(b.end, rows);
      continue;
    }
    ASSERT_EQ(b.counts.size(), static_cast<size_t>(p));
    int64_t total = 0;
    for (int r = 0; r < p; ++r) {
      EXPECT_GT(b.counts[r], 0);
      if (r + 1 < p) EXPECT_EQ(b.counts[r] % 16, 0) << "block " << r << " of " << rows;
      total += b.counts[r];
    }
    EXPECT_EQ(total, rows);
    EXPECT_EQ(b.end - b.begin, b.counts[comm->rank()]);
  }
  EXPECT_TRUE(p == 1 || detail::row_block(4097, comm).split);
}

TEST(ShardedState, CrownWorkingSetShrinksWithRanks) {
  // Three 512-wide layers: CROWN's working set is the A matrices of the intermediate passes
  // ([2 x 512, 512] rows per layer), which the ranks split; weights are FSDP-sharded.
  core::MemoryLedger::install();
  auto comm = dist::world();
  at::manual_seed(5);
  std::string bytes = testing::random_mlp(64, {512, 512, 512}, 4, "Relu");
  Graph whole = load_onnx_bytes(bytes), sharded = load_onnx_bytes(bytes);
  shard_parameters(sharded, comm);
  at::Tensor lo = at::zeros({64}, at::kDouble), hi = at::full({64}, 0.5, at::kDouble);
  BoundOptions o;
  o.method = Method::Crown;
  auto increase = [&](const Graph& g, const BoundOptions& opt) {
    core::MemoryPhase phase("crown");
    compute_bounds(g, lo, hi, opt);
    return phase.finish().peak_increase();
  };
  const int64_t one = increase(whole, o);
  o.shard_rows = comm;
  const int64_t many = increase(sharded, o);
  const int64_t weight = 512 * 512 * 8;  // one gathered weight
  EXPECT_LE(many, one / comm->size() + 2 * weight) << "one process " << one << " bytes";
}

}  // namespace
}  // namespace tessera::lirpa
