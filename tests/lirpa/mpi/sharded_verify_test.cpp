// FSDP in complete verification: with `bab.force_synchronous`, verify() on a graph whose
// parameters are sharded over the ranks gives the verdict, domain count and counterexample of
// the single-process run, bitwise, for input splitting, ReLU splitting (an MLP, a CNN, a
// ResNet) and a sat instance; at 1, 2 and 4 ranks. Every rank also runs the single-process reference itself.
//
// Sharded state (`--shard fsdp+state`, VerifyOptions::shard_state): ReLU splitting bounds
// each batch's children in blocks, one per rank, and gathers them. Per child the arithmetic
// is that of the whole batch (every batched op is row-wise, and the bound sum that the
// optimiser ascends has per-child gradients), so the verdict, the method, the domain count
// and the counterexample are compared bitwise here, with the weights FSDP-sharded too. On
// the graph engine (CNN, ResNet) the blocks' products have other sizes than the whole
// batch's, so a bound may differ in its last bit (sharded_graph_domains_test.cpp); the
// searches must still agree exactly.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <string>

#include "lirpa/bab/relu_bab.h"
#include "lirpa/mpi/relu_split_instance.h"
#include "lirpa/random_nets.h"
#include "lirpa/verify/run_clock.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/sharded_param_store.h"
#include "tessera/lirpa/verify.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::lirpa {
namespace {

const std::string kAcas = std::string(TESSERA_SHARED_DATA) + "/vnncomp2021/acasxu/";

VerifyOptions synchronous(SplitKind split) {
  VerifyOptions o;
  o.timeout = 600;  // far away: the runs must end by deciding, the same way
  o.bab.force_synchronous = true;
  o.bab.split = split;
  return o;
}

/// Runs `property` on one process and sharded (`state`: the BaB batches too); expects the
/// same outcome, bitwise.
VerifyResult expect_same_verdict(const Graph& whole, Graph& sharded, const Property& property,
                                 const VerifyOptions& o, bool state = false) {
  auto comm = dist::world();
  VerifyResult one = verify(whole, property, o);
  VerifyOptions so = o;
  so.shard_state = state;
  VerifyResult many = verify(sharded, property, so, {}, comm);
  EXPECT_EQ(verdict_name(one.verdict), verdict_name(many.verdict));
  EXPECT_EQ(one.decided_by, many.decided_by);
  EXPECT_EQ(one.domains_visited, many.domains_visited);
  EXPECT_EQ(one.counterexample.has_value(), many.counterexample.has_value());
  if (one.counterexample && many.counterexample) {
    EXPECT_TRUE(at::equal(one.counterexample->x, many.counterexample->x));
    EXPECT_TRUE(at::equal(one.counterexample->y, many.counterexample->y));
  }
  return many;
}

/// An ACAS Xu instance run on one process and sharded.
VerifyResult acas_xu_both_ways(const std::string& net, const std::string& prop, SplitKind split) {
  Graph whole = load_onnx(kAcas + net), sharded = load_onnx(kAcas + net);
  shard_parameters(sharded, dist::world());
  return expect_same_verdict(whole, sharded, load_vnnlib(kAcas + prop), synchronous(split));
}

TEST(ShardedVerify, AcasXuInputSplitIsIdentical) {
  VerifyResult r = acas_xu_both_ways("ACASXU_run2a_3_1_batch_2000.onnx", "prop_4.vnnlib", SplitKind::Input);
  EXPECT_EQ(r.verdict, Verdict::Unsat);  // expected.csv
  EXPECT_GT(r.domains_visited, 1);       // it needed branching
}

TEST(ShardedVerify, AcasXuSatCounterexampleIsIdentical) {
  VerifyResult r = acas_xu_both_ways("ACASXU_run2a_1_4_batch_2000.onnx", "prop_2.vnnlib", SplitKind::Auto);
  EXPECT_EQ(r.verdict, Verdict::Sat);  // expected.csv
}

/// A random MLP (4 -> 16 -> 16 -> 2, seed 5) and the property y0 - y1 <= t with t at
/// `fraction` of the way from its CROWN bound to its sampled minimum (< 1: unsat, so ReLU
/// splitting has to branch; > 1: sat).
struct RandomInstance {
  std::string bytes;
  Property property{4, 2, {}};
};

RandomInstance random_instance(double fraction) {
  at::manual_seed(5);  // the same network on every rank
  RandomInstance r{testing::random_mlp(4, {16, 16}, 2, "Relu")};
  Graph whole = load_onnx_bytes(r.bytes);
  at::Tensor lo = at::full({4}, -1.0, at::kDouble), hi = at::full({4}, 1.0, at::kDouble);
  at::Tensor c = at::tensor({1.0, -1.0}, at::kDouble).reshape({1, 2});  // y0 - y1
  BoundOptions bo;
  double crown = compute_bounds(whole, lo, hi, bo, c).lower.item<double>();
  at::Tensor x = lo + (hi - lo) * at::rand({4096, 4}, at::kDouble);
  double sampled = at::matmul(whole.forward(x, at::kDouble), c.t()).min().item<double>();
  EXPECT_LT(crown, sampled);
  // unsafe region: y0 - y1 <= t  (proven impossible when the minimum exceeds t)
  double t = crown + fraction * (sampled - crown);
  r.property.cases.push_back(PropertyCase{lo, hi, {OutputConjunction{c, at::full({1}, t, at::kDouble)}}});
  return r;
}

VerifyResult random_relu_split(double fraction, bool state, ReluBranching branching = ReluBranching::BaBSR) {
  RandomInstance ri = random_instance(fraction);
  Graph whole = load_onnx_bytes(ri.bytes), sharded = load_onnx_bytes(ri.bytes);
  shard_parameters(sharded, dist::world());
  VerifyOptions o = synchronous(SplitKind::Relu);
  o.alpha_enabled = false;    // leave the work to branch and bound
  o.attack.enabled = false;   // a sat answer must come from branch and bound
  o.bab.branching = branching;
  o.bab.batch_size = 5;       // odd: blocks of unequal size, and fewer children than ranks early on
  return expect_same_verdict(whole, sharded, ri.property, o, state);
}

TEST(ShardedVerify, ReluSplitOnRandomMlpIsIdentical) {
  VerifyResult r = random_relu_split(0.8, false);
  EXPECT_GT(r.domains_visited, 1);
  EXPECT_NE(r.verdict, Verdict::Timeout);
}

TEST(ShardedVerify, ShardedStateReluSplitIsIdentical) {
  VerifyResult r = random_relu_split(0.8, true);
  EXPECT_EQ(r.verdict, Verdict::Unsat);
  EXPECT_EQ(r.decided_by, "bab-relu");
  EXPECT_GT(r.domains_visited, 20);  // several batches, the first ones smaller than 4 ranks
}

TEST(ShardedVerify, ShardedStateFsbIsIdentical) {
  VerifyResult r = random_relu_split(0.8, true, ReluBranching::FSB);
  EXPECT_EQ(r.verdict, Verdict::Unsat);
  EXPECT_GT(r.domains_visited, 1);
}

TEST(ShardedVerify, ShardedStateSatCounterexampleIsIdentical) {
  VerifyResult r = random_relu_split(1.02, true);
  EXPECT_EQ(r.verdict, Verdict::Sat);
  EXPECT_EQ(r.decided_by, "bab-relu");
}

/// Graph branch and bound (a CNN with max pooling and a residual net: no chain form) on one
/// process and with FSDP weights, with and without the sharded state: `fraction` of the way
/// from the search root's bound of y_0 (CROWN, final slopes optimised) to its sampled minimum
/// (< 1: branching must prove it; > 1: sat).
VerifyResult graph_relu_split(const std::string& bytes, double fraction, bool state) {
  Graph whole = load_onnx_bytes(bytes), sharded = load_onnx_bytes(bytes);
  shard_parameters(sharded, dist::world());
  const Property property = testing::relu_split_property(whole, fraction);
  VerifyOptions o = synchronous(SplitKind::Relu);
  o.alpha_enabled = false;        // leave the work to branch and bound
  o.attack.enabled = fraction > 1;
  o.bab.batch_size = 5;
  return expect_same_verdict(whole, sharded, property, o, state);
}

TEST(ShardedVerify, GraphReluSplitOnCnnAndResNetIsIdentical) {
  at::manual_seed(3);
  const std::vector<std::pair<std::string, std::string>> nets{{"cnn", testing::random_cnn("MaxPool")},
                                                              {"resnet", testing::random_residual(6)}};
  for (const auto& [name, bytes] : nets) {
    for (bool state : {false, true}) {
      SCOPED_TRACE(name + (state ? " fsdp+state" : " fsdp"));
      VerifyResult unsat = graph_relu_split(bytes, 0.2, state);
      EXPECT_EQ(unsat.verdict, Verdict::Unsat) << unsat.reason;
      EXPECT_EQ(unsat.decided_by, "bab-relu");
      EXPECT_GT(unsat.domains_visited, 1);
      VerifyResult sat = graph_relu_split(bytes, 1.05, state);
      EXPECT_EQ(sat.verdict, Verdict::Sat);
    }
  }
}

// mnistfc 256x2 prop_0_0.03 (alpha-CROWN, then beta-CROWN BaB) in fsdp+state mode is
// compared by the CLI test cli_verify_fsdp_state_np2_mnistfc (verdict, method, domains, and a
// lower peak per rank); here it would take about a minute per rank count on two shared cores.

/// The blocks of a batch of children cover it in order, one per rank; a rank without a
/// child of its own stands in with a copy of the last one and contributes no rows.
TEST(ShardedVerify, ChildBlocksGatherTheBatchInOrder) {
  auto comm = dist::world();
  for (int64_t children : {1, 2, 3, 8, 13}) {
    detail::ChildBlock block = detail::child_block(comm.get(), children);
    EXPECT_EQ(block.split(), comm->size() > 1);
    EXPECT_EQ(block.stand_in, comm->size() > 1 && comm->rank() >= children);
    ASSERT_GE(block.size(), 1);  // every rank bounds at least one child (same collectives)
    at::Tensor mine = at::arange(block.lo, block.hi, at::kLong);
    at::Tensor all = detail::gather_block(*comm, block, mine);
    EXPECT_TRUE(at::equal(all, at::arange(children, at::kLong))) << children << " children";
    // the stop test of the optimiser: every rank with children must agree
    EXPECT_TRUE(detail::on_every_rank(*comm, block, true));
    EXPECT_FALSE(detail::on_every_rank(*comm, block, comm->rank() != 0));  // rank 0 always has children
    EXPECT_TRUE(detail::on_every_rank(*comm, block, !block.stand_in));     // a stand-in's verdict is ignored
  }
}

/// A run's length is rank 0's on every rank: `tessera verify` gives each rank the time left
/// after its own start-up, which differs by milliseconds, and the full alpha-CROWN stage's
/// share of it decides when the optimiser stops. With each rank's own length, one rank
/// stopped a step before the other near the share's end and their collectives no longer
/// matched (a weight all-gather against a clock broadcast: a corrupted heap, about one run in
/// seven of cli_verify_timeout_np2_fsdp).
TEST(ShardedVerify, RunClockLengthIsRankZeros) {
  auto comm = dist::world();
  detail::RunClock clock(30.0 + 0.001 * comm->rank(), comm);
  EXPECT_EQ(clock.seconds(), 30.0);
  EXPECT_FALSE(clock.expired());
  detail::RunClock over(comm->rank() == 0 ? 0.0 : 30.0, comm);  // rank 0's deadline has passed
  EXPECT_EQ(over.seconds(), 0.0);
  EXPECT_TRUE(over.expired());
}

}  // namespace
}  // namespace tessera::lirpa
