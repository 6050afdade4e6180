// Tensor parallelism (ShardMode::Tp): every rank keeps its rows of each weight matrix and
// multiplies by them, the passes are the graph engine's. At 1, 2 and 4 ranks: the store's
// products are the whole matrix's up to rounding (uneven and empty blocks too), bitwise
// equal on every rank, and differentiable; IBP, CROWN and alpha-CROWN on an MLP, a CNN and a
// residual net match one process to 1e-9 relative and hold sampled outputs, with no weight
// matrix of an MLP ever gathered; complete verification (ReLU splitting with beta on an
// MLP, a CNN and a ResNet, input splitting on ACAS Xu, a sat instance) decides what one
// process decides with `force_synchronous`, the same on every rank.

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <string>

#include "lirpa/mpi/relu_split_instance.h"
#include "lirpa/mpi/shard_checks.h"
#include "lirpa/random_nets.h"
#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/sharded_param_store.h"
#include "tessera/lirpa/verify.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::lirpa {
namespace {

using testing::expect_same_on_every_rank;
using testing::rel_difference;

/// Largest |a - b| relative to 1 + max |b|.
double rel(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>() / (1 + b.abs().max().item<double>());
}

TEST(TpStore, ProductsAreTheWholeMatrixsOnEveryRank) {
  auto comm = dist::world();
  ShardedParamStore store(comm, ShardMode::Tp);
  EXPECT_TRUE(store.collective_products());
  for (int64_t k : {1, 3, 7, 64}) {  // fewer rows than ranks, uneven and even blocks
    SCOPED_TRACE("k = " + std::to_string(k));
    at::manual_seed(k);  // the same values on every rank
    at::Tensor w = at::randn({k, 5}, at::kDouble), x = at::randn({2, 3, k}, at::kDouble);
    at::Tensor a = at::randn({4, 5}, at::kDouble);
    const std::string key = "w" + std::to_string(k);
    store.put(key, w);
    const int64_t gathers = store.gather_count();
    std::vector<at::Tensor> y = store.times(key, at::kDouble, {{x, false}, {x, true}});
    at::Tensor ax = store.times_transposed(key, at::kDouble, a);
    EXPECT_EQ(store.gather_count(), gathers) << "a TP product gathered the weight";
    EXPECT_EQ(y[0].sizes(), (std::vector<int64_t>{2, 3, 5}));
    EXPECT_LT(rel(y[0], at::matmul(x, w)), 1e-14);
    EXPECT_LT(rel(y[1], at::matmul(x, w.abs())), 1e-14);
    EXPECT_LT(rel(ax, at::matmul(a, w.t())), 1e-14);
    std::vector<at::Tensor> y32 = store.times(key, at::kFloat, {{x.to(at::kFloat), false}});
    EXPECT_LT(rel(y32[0].to(at::kDouble), at::matmul(x, w)), 1e-5);
    expect_same_on_every_rank(y[0], *comm);
    expect_same_on_every_rank(y[1], *comm);
    EXPECT_THROW(store.times(key, at::kDouble, {{at::randn({2, k + 1}, at::kDouble), false}}), Error);
  }
  store.put("bias", at::ones({5}, at::kDouble));  // vectors stay whole on every rank
  const int64_t gathers = store.gather_count();
  EXPECT_TRUE(at::equal(store.get("bias", at::kDouble), at::ones({5}, at::kDouble)));
  EXPECT_EQ(store.gather_count(), gathers);
}

/// An MLP with a TP store and its whole copy (the same on every rank).
struct MlpPair {
  Graph whole, tp;
  std::shared_ptr<ShardedParamStore> store;
};

MlpPair mlp_pair(const std::vector<int64_t>& hidden, int64_t inputs = 6) {
  at::manual_seed(7);
  std::string bytes = testing::random_mlp(inputs, hidden, 4, "Relu");
  MlpPair p{load_onnx_bytes(bytes), load_onnx_bytes(bytes), nullptr};
  p.store = shard_parameters(p.tp, dist::world(), ShardMode::Tp);
  return p;
}

TEST(TpStore, ForwardGradientIsAutogradsOnTheWholeNetwork) {
  // PGD differentiates the forward pass: the product's backward is the store's transposed
  // product (a collective every rank joins)
  MlpPair p = mlp_pair({33, 17});
  at::manual_seed(3);
  at::Tensor x0 = at::randn({5, 6}, at::kDouble);
  auto grad = [&](const Graph& g) {
    at::Tensor x = x0.clone().requires_grad_(true);
    at::Tensor loss = (g.forward(x, at::kDouble) * at::arange(4, at::kDouble)).sum();
    return torch::autograd::grad({loss}, {x})[0];
  };
  at::Tensor whole = grad(p.whole), tp = grad(p.tp);
  EXPECT_LT(rel(tp, whole), 1e-12);
  expect_same_on_every_rank(tp, *dist::world());
  EXPECT_LE(p.store->local_bytes(), p.store->full_bytes() / dist::world()->size() + 2 * 1024);
}

TEST(TpStore, IbpTakesTheAbsoluteRowsInBlocks) {
  // x |W[I_r, :]| one block of columns at a time: never a whole copy of the rank's rows
  core::MemoryLedger::install();
  testing::BlockBytes blocks(32 * 1024);
  at::manual_seed(3);
  Graph g = load_onnx_bytes(testing::random_mlp(32, {256, 256, 256, 256, 256}, 4, "Relu"));
  auto store = shard_parameters(g, dist::world(), ShardMode::Tp);
  const int64_t own_rows_bytes = ShardedParamStore::block_counts(256, dist::world()->size())[0] * 256 * 8;
  at::Tensor lo = at::zeros({32}, at::kDouble), hi = at::ones({32}, at::kDouble);
  BoundOptions o;
  o.method = Method::Ibp;
  core::MemoryPhase phase("ibp");
  compute_bounds(g, lo, hi, o);
  EXPECT_LT(phase.finish().peak_increase(), own_rows_bytes) << "a whole |W[I_r, :]| was made";
}

using Builder = std::string (*)();
std::string mlp() { return testing::random_mlp(6, {24, 24, 16}, 4, "Relu"); }
std::string cnn() { return testing::random_cnn("MaxPool"); }
std::string residual() { return testing::random_residual(8); }

class TpBounds : public ::testing::TestWithParam<std::tuple<Builder, Method>> {};

TEST_P(TpBounds, OneProcesssUpToRoundingAndSound) {
  auto comm = dist::world();
  auto [build, method] = GetParam();
  at::manual_seed(7);
  std::string bytes = build();
  Graph whole = load_onnx_bytes(bytes), tp = load_onnx_bytes(bytes);
  auto store = shard_parameters(tp, comm, ShardMode::Tp);
  at::manual_seed(11);
  at::Tensor centre = at::rand({whole.input_size()}, at::kDouble);
  at::Tensor lo = centre - 0.1, hi = centre + 0.1;
  BoundOptions o;
  o.method = method;
  o.alpha.iterations = 5;
  at::Tensor c = at::randn({3, whole.output_size()}, at::kDouble);
  for (const at::Tensor& spec : {at::Tensor(), c}) {
    BoundsResult one = compute_bounds(whole, lo, hi, o, spec);
    const int64_t gathers = store->gather_count();
    BoundsResult many = compute_bounds(tp, lo, hi, o, spec);
    if (build == &mlp && method != Method::AlphaCrown) EXPECT_EQ(store->gather_count(), gathers);
    EXPECT_LT(rel_difference(one, many), 1e-9) << method_name(method);
    expect_same_on_every_rank(many.lower, *comm);
    expect_same_on_every_rank(many.upper, *comm);
    testing::expect_sound(whole, many, lo, hi, spec, method_name(method), 500);
  }
}

INSTANTIATE_TEST_SUITE_P(Nets, TpBounds,
                         ::testing::Combine(::testing::Values(&mlp, &cnn, &residual),
                                            ::testing::Values(Method::Ibp, Method::Crown, Method::AlphaCrown)));

VerifyOptions synchronous(SplitKind split) {
  VerifyOptions o;
  o.timeout = 600;  // far away: the runs must end by deciding
  o.bab.force_synchronous = true;
  o.bab.split = split;
  return o;
}

/// `property` on one process and tensor-parallel: the same verdict and method, and every
/// rank's result the same (verdict, domains, counterexample).
VerifyResult expect_same_decision(const Graph& whole, const Graph& tp, const Property& property,
                                  const VerifyOptions& o) {
  auto comm = dist::world();
  VerifyResult one = verify(whole, property, o);
  VerifyResult many = verify(tp, property, o, {}, comm);
  EXPECT_EQ(verdict_name(one.verdict), verdict_name(many.verdict));
  EXPECT_EQ(one.decided_by, many.decided_by);
  expect_same_on_every_rank(at::tensor({double(int(many.verdict)), double(many.domains_visited)}, at::kDouble),
                            *comm);
  if (many.counterexample) expect_same_on_every_rank(many.counterexample->x, *comm);
  return many;
}

/// y_0 <= t over a box, t at `fraction` of the way from the search root's bound (CROWN, final
/// slopes optimised) to the sampled minimum (< 1: unsat, branching must prove it; > 1: sat),
/// ReLU splitting with beta.
VerifyResult relu_split(const std::string& bytes, double fraction) {
  Graph whole = load_onnx_bytes(bytes), tp = load_onnx_bytes(bytes);
  shard_parameters(tp, dist::world(), ShardMode::Tp);
  const Property property = testing::relu_split_property(whole, fraction);
  VerifyOptions o = synchronous(SplitKind::Relu);
  o.alpha_enabled = false;  // leave the work to branch and bound
  o.attack.enabled = fraction > 1;
  o.bab.batch_size = 5;
  return expect_same_decision(whole, tp, property, o);
}

TEST(TpVerify, ReluSplittingWithBetaOnMlpCnnAndResNet) {
  at::manual_seed(3);  // the CNN and ResNet of sharded_verify_test.cpp, then an MLP
  std::vector<std::pair<std::string, std::string>> nets{{"cnn", testing::random_cnn("MaxPool")},
                                                        {"resnet", testing::random_residual(6)}};
  nets.emplace_back("mlp", testing::random_mlp(4, {16, 16}, 2, "Relu"));
  for (const auto& [name, bytes] : nets) {
    SCOPED_TRACE(name);
    VerifyResult unsat = relu_split(bytes, 0.2);
    EXPECT_EQ(unsat.verdict, Verdict::Unsat) << unsat.reason;
    EXPECT_EQ(unsat.decided_by, "bab-relu");
    EXPECT_GT(unsat.domains_visited, 1);
    VerifyResult sat = relu_split(bytes, 1.05);
    EXPECT_EQ(sat.verdict, Verdict::Sat);
  }
}

TEST(TpVerify, AcasXuInputSplittingAndSat) {
  const std::string acas = std::string(TESSERA_SHARED_DATA) + "/vnncomp2021/acasxu/";
  struct Case {
    std::string net, prop;
    Verdict expected;  // expected.csv
  };
  for (const Case& k : {Case{"ACASXU_run2a_3_1_batch_2000.onnx", "prop_4.vnnlib", Verdict::Unsat},
                        Case{"ACASXU_run2a_1_4_batch_2000.onnx", "prop_2.vnnlib", Verdict::Sat}}) {
    SCOPED_TRACE(k.net + " " + k.prop);
    Graph whole = load_onnx(acas + k.net), tp = load_onnx(acas + k.net);
    shard_parameters(tp, dist::world(), ShardMode::Tp);
    VerifyResult r = expect_same_decision(whole, tp, load_vnnlib(acas + k.prop), synchronous(SplitKind::Auto));
    EXPECT_EQ(r.verdict, k.expected);
  }
}

}  // namespace
}  // namespace tessera::lirpa
