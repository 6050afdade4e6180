// The single-process communicator: collectives are identities, errors are clear.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "dist/self_communicator.h"
#include "tessera/core/error.h"
#include "tessera/dist/differentiable.h"
#include "tessera/dist/self_check.h"

namespace tessera::dist {
namespace {

TEST(SelfCommunicator, IsRankZeroOfOne) {
  SelfCommunicator comm;
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.size(), 1);
  EXPECT_EQ(comm.kind(), "self");
}

TEST(SelfCommunicator, CollectivesReturnTheInput) {
  SelfCommunicator comm;
  at::Tensor x = at::arange(6, at::kDouble).reshape({3, 2});
  at::Tensor y = x.clone();
  comm.all_reduce(y, ReduceOp::Sum);
  EXPECT_TRUE(at::equal(y, x));
  EXPECT_TRUE(at::equal(comm.all_gather(x), x));
  EXPECT_TRUE(at::equal(comm.reduce_scatter(x), x));
  comm.broadcast(y, 0);
  EXPECT_TRUE(at::equal(y, x));
}

TEST(SelfCommunicator, NeighbourExchangeWithItselfSelectsRows) {
  SelfCommunicator comm;
  at::Tensor x = at::arange(10, at::kLong).reshape({5, 2});
  NeighbourPlan plan{{0}, {at::tensor({4, 1}, at::kLong)}, {2}};
  auto received = comm.neighbour_exchange(x, plan);
  ASSERT_EQ(received.size(), 1u);
  EXPECT_TRUE(at::equal(received[0], at::tensor({8, 9, 2, 3}, at::kLong).reshape({2, 2})));
}

TEST(SelfCommunicator, BadInputIsAClearError) {
  SelfCommunicator comm;
  at::Tensor x = at::ones({4}, at::kDouble);
  at::Tensor half = at::ones({4}, at::kHalf);
  EXPECT_THROW(comm.all_reduce(half, ReduceOp::Sum), Unsupported);
  at::Tensor strided = at::ones({4, 4}, at::kDouble).t();
  EXPECT_THROW(comm.all_reduce(strided, ReduceOp::Sum), InvalidInput);
  EXPECT_THROW(comm.broadcast(x, 1), InvalidInput);
  EXPECT_THROW(comm.all_gather(x, {3}), DimensionMismatch);
  EXPECT_THROW(comm.all_gather(x, {2, 2}), InvalidInput);
  NeighbourPlan to_rank_one{{1}, {at::zeros({1}, at::kLong)}, {1}};
  EXPECT_THROW(comm.neighbour_exchange(x, to_rank_one), InvalidInput);
}

TEST(SelfCommunicator, SelfCheckPasses) {
  SelfCommunicator comm;
  SelfCheckReport report = run_self_check(comm);
  EXPECT_TRUE(report.passed);
  EXPECT_TRUE(report.failures.empty());
}

TEST(SelfCommunicator, DifferentiableCollectivesAreIdentities) {
  auto comm = std::make_shared<SelfCommunicator>();
  at::Tensor x = at::randn({3, 2}, at::kDouble).set_requires_grad(true);
  at::Tensor loss = (differentiable::all_gather(comm, x) * 3.0).sum() +
                    differentiable::all_reduce_sum(comm, x).pow(2).sum();
  loss.backward();
  // d/dx [3 sum x + sum x^2] = 3 + 2 x
  EXPECT_TRUE(at::allclose(x.grad(), 3.0 + 2.0 * x.detach()));
}

TEST(BalancedCounts, SplitsEvenlyWithRemainderFirst) {
  EXPECT_EQ(balanced_counts(10, 4), (std::vector<int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(balanced_counts(2, 4), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_THROW(balanced_counts(5, 0), InvalidInput);
}

}  // namespace
}  // namespace tessera::dist
