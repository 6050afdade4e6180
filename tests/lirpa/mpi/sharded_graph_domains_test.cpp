// Graph branch and bound's sharded state (`--shard fsdp+state`): bound_graph_domains with a
// communicator cuts each group of domains into one block per rank, bounds its own block
// with FSDP-sharded weights, and gathers the blocks. Every rank must get the whole batch's
// bounds, those of one process bounding it alone up to rounding, while bounding only its
// block (groups smaller than the rank count make stand-ins, which count for nothing). The
// verdicts, domain counts and counterexamples of whole runs are compared bitwise in
// sharded_verify_test.cpp.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <string>

#include "lirpa/bab/graph_bab.h"
#include "lirpa/graph_domains.h"
#include "lirpa/random_nets.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/sharded_param_store.h"
#include "tessera/lirpa/verify.h"

namespace tessera::lirpa {
namespace {

// Equal up to the last bits: a block's products have other sizes than the whole batch's
// (the BLAS kernels then round differently: 2.8e-17 seen on a bound of 0.1); infinite
// bounds (no bound, infeasible) at the same places.
void expect_near(const at::Tensor& one, const at::Tensor& many, const std::string& what) {
  at::Tensor finite = at::isfinite(one);
  ASSERT_TRUE(at::equal(finite, at::isfinite(many))) << what;
  at::Tensor a = at::where(finite, one, at::zeros_like(one)), b = at::where(finite, many, at::zeros_like(many));
  EXPECT_TRUE(at::allclose(a, b, 1e-12, 1e-12)) << what << ": " << (a - b).abs().max();
}

void expect_same(const detail::GraphBounded& one, const detail::GraphBounded& many, size_t relus) {
  EXPECT_EQ(one.bounded, many.bounded);
  EXPECT_TRUE(at::equal(one.bounds.infeasible, many.bounds.infeasible));
  expect_near(one.lb, many.lb, "lb");
  expect_near(one.a_input, many.a_input, "a_input");
  for (size_t j = 0; j < relus; ++j) {
    const std::string node = "ReLU node " + std::to_string(j);
    expect_near(one.bounds.lower[j], many.bounds.lower[j], node + " lower");
    expect_near(one.bounds.upper[j], many.bounds.upper[j], node + " upper");
    expect_near(one.lambda[j], many.lambda[j], node + " lambda");
  }
}

int64_t sum_over_ranks(dist::Communicator& comm, int64_t v) {
  at::Tensor t = at::full({1}, v, at::kLong);
  comm.all_reduce(t, dist::ReduceOp::Sum);
  return t.item<int64_t>();
}

TEST(ShardedGraphDomains, BlocksPerRankGatherTheBoundsOfOneProcess) {
  auto comm = dist::world();
  at::manual_seed(3);  // the same networks, boxes and children on every rank
  const std::vector<std::pair<std::string, std::string>> nets{{"cnn", testing::random_cnn("MaxPool")},
                                                              {"resnet", testing::random_residual(6)}};
  const BetaOptions beta = VerifyOptions().beta;
  for (const auto& [name, bytes] : nets) {
    SCOPED_TRACE(name);
    Graph whole = load_onnx_bytes(bytes), sharded = load_onnx_bytes(bytes);
    shard_parameters(sharded, comm);
    auto relus = detail::graph_relus(whole);
    at::Tensor x0 = at::randn({whole.input_size()}, at::kDouble) * 0.5;
    at::Tensor lo = x0 - 0.3, hi = x0 + 0.3;
    at::Tensor c = at::zeros({2, whole.output_size()}, at::kDouble);
    c[0][0] = 1.0, c[1][0] = 1.0, c[1][1] = -1.0;
    at::Tensor rhs = at::zeros({2}, at::kDouble);
    detail::GraphBounded root =
        detail::bound_graph_domains(whole, relus, testing::root_domain(lo, hi, relus), c, rhs);
    // children that reuse their parent's bounds up to different ReLU nodes: several groups,
    // some smaller than the rank count
    const int64_t n = 7;
    detail::GraphDomains kids = testing::random_children(root, relus, lo, hi, n);
    detail::GraphBounded one = detail::bound_graph_domains(whole, relus, kids, c, rhs, nullptr, &beta);
    detail::GraphBounded many = detail::bound_graph_domains(sharded, relus, kids, c, rhs, nullptr, &beta, {}, comm);
    expect_same(one, many, relus.size());
    EXPECT_EQ(one.bounded_here, n);
    EXPECT_EQ(sum_over_ranks(*comm, many.bounded_here), n);  // each domain bounded by one rank
    // one group (every bound recomputed): each rank bounds only its block
    kids.reuse_upto = at::full({n}, -1, at::kLong);
    one = detail::bound_graph_domains(whole, relus, kids, c, rhs, nullptr, &beta);
    many = detail::bound_graph_domains(sharded, relus, kids, c, rhs, nullptr, &beta, {}, comm);
    expect_same(one, many, relus.size());
    EXPECT_EQ(many.bounded_here, (n + comm->size() - 1 - comm->rank()) / comm->size());
  }
}

}  // namespace
}  // namespace tessera::lirpa
