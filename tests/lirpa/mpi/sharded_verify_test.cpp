// FSDP in complete verification: with `bab.force_synchronous`, verify() on a graph whose
// parameters are sharded over the ranks (and the ReluNet that branch and bound extracts,
// sharded as it is read off) gives the verdict, domain count and counterexample of the
// single-process run, bitwise, for input splitting, ReLU splitting and a sat instance; at
// 1, 2 and 4 ranks. Every rank also runs the single-process reference itself.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <string>

#include "lirpa/random_nets.h"
#include "lirpa/verify/relu_net.h"
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

/// Runs `property` on one process and sharded; expects the same outcome, bitwise.
VerifyResult expect_same_verdict(const Graph& whole, Graph& sharded, const Property& property,
                                 const VerifyOptions& o) {
  auto comm = dist::world();
  VerifyResult one = verify(whole, property, o);
  VerifyResult many = verify(sharded, property, o, {}, comm);
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

/// A random MLP and a threshold between its CROWN bound and its sampled minimum, so that
/// ReLU splitting has to branch.
TEST(ShardedVerify, ReluSplitOnRandomMlpIsIdentical) {
  at::manual_seed(5);  // the same network on every rank
  std::string bytes = testing::random_mlp(4, {16, 16}, 2, "Relu");
  Graph whole = load_onnx_bytes(bytes), sharded = load_onnx_bytes(bytes);
  shard_parameters(sharded, dist::world());
  at::Tensor lo = at::full({4}, -1.0, at::kDouble), hi = at::full({4}, 1.0, at::kDouble);
  at::Tensor c = at::tensor({1.0, -1.0}, at::kDouble).reshape({1, 2});  // y0 - y1
  BoundOptions bo;
  double crown = compute_bounds(whole, lo, hi, bo, c).lower.item<double>();
  at::Tensor x = lo + (hi - lo) * at::rand({4096, 4}, at::kDouble);
  double sampled = at::matmul(whole.forward(x, at::kDouble), c.t()).min().item<double>();
  ASSERT_LT(crown, sampled);
  // unsafe region: y0 - y1 <= t  (proven impossible when the minimum exceeds t)
  double t = crown + 0.8 * (sampled - crown);
  Property p{4, 2, {}};
  p.cases.push_back(PropertyCase{lo, hi, {OutputConjunction{c, at::full({1}, t, at::kDouble)}}});
  VerifyOptions o = synchronous(SplitKind::Relu);
  o.alpha_enabled = false;  // leave the work to branch and bound
  VerifyResult r = expect_same_verdict(whole, sharded, p, o);
  EXPECT_GT(r.domains_visited, 1);
  EXPECT_NE(r.verdict, Verdict::Timeout);
}

TEST(ShardedVerify, ExtractedWeightsAreShardedAndGatherBitwise) {
  auto comm = dist::world();
  std::string net = kAcas + "ACASXU_run2a_1_1_batch_2000.onnx";
  Graph whole = load_onnx(net), sharded = load_onnx(net);
  shard_parameters(sharded, comm);
  std::optional<detail::ReluNet> one = detail::extract_relu_net(whole), many = detail::extract_relu_net(sharded, nullptr, comm);
  ASSERT_TRUE(one && many);
  ASSERT_EQ(one->layers(), many->layers());
  int64_t full = one->w.local_bytes(), rows_of_largest = 0;
  for (int k = 0; k < one->layers(); ++k) {
    EXPECT_TRUE(at::equal(one->w[k], many->w[k])) << "layer " << k;
    rows_of_largest = std::max(rows_of_largest, one->w.cols(k) * 8);
  }
  // each rank keeps about 1/P of every matrix: at most one extra row per matrix
  int64_t p = comm->size();
  EXPECT_LE(many->w.local_bytes(), full / p + one->layers() * rows_of_largest);
}

}  // namespace
}  // namespace tessera::lirpa
