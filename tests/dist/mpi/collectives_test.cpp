// Every collective at 1, 2 and 4 ranks against its closed-form answer.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/dist/self_check.h"

namespace tessera::dist {
namespace {

class Collectives : public ::testing::TestWithParam<at::ScalarType> {
 protected:
  std::shared_ptr<Communicator> comm = world();
  int r = comm->rank();
  int p = comm->size();
  at::TensorOptions opts = at::TensorOptions().dtype(GetParam());
};

TEST_P(Collectives, AllReduceSumMaxMin) {
  at::Tensor x = at::arange(6, opts).reshape({2, 3}) * (r + 1);  // x_r = (r + 1) i
  at::Tensor s = x.clone(), mx = x.clone(), mn = x.clone();
  comm->all_reduce(s, ReduceOp::Sum);  // sum_r (r + 1) i = i P (P + 1) / 2
  comm->all_reduce(mx, ReduceOp::Max);
  comm->all_reduce(mn, ReduceOp::Min);
  at::Tensor i = at::arange(6, opts).reshape({2, 3});
  EXPECT_TRUE(at::equal(s, i * (p * (p + 1) / 2)));
  EXPECT_TRUE(at::equal(mx, i * p));
  EXPECT_TRUE(at::equal(mn, i));
}

TEST_P(Collectives, AllGatherEqualAndUnequalRows) {
  at::Tensor equal_rows = at::full({2, 3}, r, opts);
  at::Tensor gathered = comm->all_gather(equal_rows, std::vector<int64_t>(p, 2));
  ASSERT_EQ(gathered.size(0), 2 * p);
  for (int q = 0; q < p; ++q) EXPECT_TRUE(at::equal(gathered.narrow(0, 2 * q, 2), at::full({2, 3}, q, opts)));

  // rank r holds r rows (rank 0 none): counts discovered by the communicator
  at::Tensor mine = at::full({r, 3}, r, opts);
  at::Tensor all = comm->all_gather(mine);
  EXPECT_EQ(all.size(0), p * (p - 1) / 2);
  int64_t row = 0;
  for (int q = 0; q < p; ++q) {
    EXPECT_TRUE(at::equal(all.narrow(0, row, q), at::full({q, 3}, q, opts)));
    row += q;
  }
}

TEST_P(Collectives, ReduceScatterIsTheTransposeOfAllGather) {
  // <all_gather(x), y> summed over ranks == <x, reduce_scatter(y)> summed over ranks
  std::vector<int64_t> counts;
  for (int q = 0; q < p; ++q) counts.push_back(q + 1);
  const int64_t total = p * (p + 1) / 2;
  at::Tensor y = (at::arange(total * 2, opts).reshape({total, 2}) + r);
  at::Tensor block = comm->reduce_scatter(y, counts);
  ASSERT_EQ(block.size(0), r + 1);
  // block_r = sum_q (arange + q) rows of block r = P arange + P (P - 1) / 2
  int64_t offset = r * (r + 1) / 2;
  at::Tensor expected = at::arange(total * 2, opts).reshape({total, 2}).narrow(0, offset, r + 1) * p +
                        p * (p - 1) / 2;
  EXPECT_TRUE(at::equal(block, expected));
}

TEST_P(Collectives, BroadcastFromEveryRoot) {
  for (int root = 0; root < p; ++root) {
    at::Tensor t = r == root ? at::arange(5, opts) * (root + 2) : at::zeros({5}, opts);
    comm->broadcast(t, root);
    EXPECT_TRUE(at::equal(t, at::arange(5, opts) * (root + 2))) << "root " << root;
  }
}

TEST_P(Collectives, NeighbourExchangeRingBothDirections) {
  // local rows: [10 r, 10 r + 1, 10 r + 2] (two columns); send row 2 to the next rank
  // and rows {0, 1} to the previous one.
  at::Tensor local = (at::arange(3, opts) + 10 * r).unsqueeze(1).repeat({1, 2}).contiguous();
  const int next = (r + 1) % p, prev = (r + p - 1) % p;
  NeighbourPlan plan;
  if (p == 1) {
    plan = {{0}, {at::tensor({2, 0, 1}, at::kLong)}, {3}};
  } else if (p == 2) {
    // next == prev: both lists go to the same peer, in one message
    plan = {{next}, {at::tensor({2, 0, 1}, at::kLong)}, {3}};
  } else {
    plan = {{next, prev}, {at::tensor({2}, at::kLong), at::tensor({0, 1}, at::kLong)}, {2, 1}};
  }
  auto pending = comm->start_neighbour_exchange(local, plan);
  at::Tensor overlap = local.sum();  // local work while messages are in flight
  auto received = pending->wait();
  EXPECT_EQ(overlap.item<double>(), 2 * (30 * r + 3));
  auto rows = [&](std::vector<int64_t> v) {
    return at::tensor(v, at::kLong).to(GetParam()).unsqueeze(1).repeat({1, 2});
  };
  if (p <= 2) {
    EXPECT_TRUE(at::equal(received[0], rows({10 * prev + 2, 10 * prev, 10 * prev + 1})));
  } else {
    EXPECT_TRUE(at::equal(received[0], rows({10 * next, 10 * next + 1})));  // from next: its {0,1}
    EXPECT_TRUE(at::equal(received[1], rows({10 * prev + 2})));             // from prev: its row 2
  }
}

TEST_P(Collectives, SelfCheckPasses) {
  SelfCheckReport report = run_self_check(*comm);
  EXPECT_TRUE(report.passed) << (report.failures.empty() ? "" : report.failures[0]);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Collectives,
                         ::testing::Values(at::kFloat, at::kDouble, at::kInt, at::kLong),
                         [](const auto& info) { return std::string(c10::toString(info.param)); });

TEST(CollectiveErrors, LocalChecksFailBeforeAnyMessage) {
  auto comm = world();
  at::Tensor half = at::ones({3}, at::kHalf);
  EXPECT_THROW(comm->all_reduce(half, ReduceOp::Sum), Unsupported);
  at::Tensor x = at::ones({3}, at::kFloat);
  EXPECT_THROW(comm->broadcast(x, comm->size()), InvalidInput);
  EXPECT_THROW(comm->all_gather(x, std::vector<int64_t>(comm->size(), 2)), DimensionMismatch);
}

}  // namespace
}  // namespace tessera::dist
