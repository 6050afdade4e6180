#include "tessera/dist/self_check.h"

#include <ATen/ATen.h>

#include "tessera/dist/communicator.h"

namespace tessera::dist {
namespace {

void expect(SelfCheckReport& report, bool ok, const std::string& what, at::ScalarType dtype) {
  if (!ok) report.failures.push_back(what + " (" + std::string(c10::toString(dtype)) + ")");
}

// Rank r contributes x_r = r + 1 + arange(4); answers in closed form over P ranks.
void check_dtype(Communicator& comm, at::ScalarType dtype, SelfCheckReport& report) {
  const int r = comm.rank();
  const int p = comm.size();
  auto opts = at::TensorOptions().dtype(dtype);
  at::Tensor base = at::arange(4, opts);
  at::Tensor mine = base + (r + 1);

  at::Tensor s = mine.clone();
  comm.all_reduce(s, ReduceOp::Sum);  // sum_r (r + 1 + i) = P i + P (P + 1) / 2
  expect(report, at::equal(s, base * p + p * (p + 1) / 2), "all_reduce sum", dtype);
  at::Tensor mx = mine.clone();
  comm.all_reduce(mx, ReduceOp::Max);
  expect(report, at::equal(mx, base + p), "all_reduce max", dtype);
  at::Tensor mn = mine.clone();
  comm.all_reduce(mn, ReduceOp::Min);
  expect(report, at::equal(mn, base + 1), "all_reduce min", dtype);

  // rank r sends r + 1 rows of value r: unequal row counts
  at::Tensor rows = at::full({r + 1, 2}, r, opts);
  at::Tensor gathered = comm.all_gather(rows);
  std::vector<at::Tensor> blocks;
  for (int q = 0; q < p; ++q) blocks.push_back(at::full({q + 1, 2}, q, opts));
  expect(report, at::equal(gathered, at::cat(blocks)), "all_gather", dtype);

  // reduce_scatter of P x 3 rows, every rank sending (arange + rank): block r of the sum
  at::Tensor contrib = at::arange(3 * p, opts).reshape({p, 3}) + r;
  at::Tensor block = comm.reduce_scatter(contrib);
  at::Tensor expected_block = (at::arange(3, opts) + 3 * r) * p + p * (p - 1) / 2;
  expect(report, at::equal(block, expected_block.reshape({1, 3})), "reduce_scatter", dtype);

  at::Tensor b = r == p - 1 ? base * 7 : at::zeros({4}, opts);
  comm.broadcast(b, p - 1);
  expect(report, at::equal(b, base * 7), "broadcast", dtype);

  // ring: send my row 0 (value 10 r) to the next rank, receive from the previous one
  NeighbourPlan plan;
  at::Tensor local = at::stack({at::full({2}, 10 * r, opts), at::full({2}, -1, opts)});
  int next = (r + 1) % p, prev = (r + p - 1) % p;
  plan.peers = {next};
  plan.send_index = {at::zeros({1}, at::kLong)};
  plan.recv_rows = {1};
  if (prev != next) {
    plan.peers.push_back(prev);
    plan.send_index.push_back(at::zeros({0}, at::kLong));
    plan.recv_rows.push_back(0);
  }
  // From `next` we receive nothing unless next == prev (P <= 2), where the lists merge.
  if (prev != next) plan.recv_rows[0] = 0, plan.recv_rows[1] = 1;
  auto received = comm.neighbour_exchange(local, plan);
  at::Tensor from_prev = prev != next ? received[1] : received[0];
  expect(report, at::equal(from_prev, at::full({1, 2}, 10 * prev, opts)), "neighbour_exchange",
         dtype);
}

}  // namespace

SelfCheckReport run_self_check(Communicator& comm) {
  SelfCheckReport report;
  for (auto dtype : {at::kFloat, at::kDouble, at::kInt, at::kLong}) check_dtype(comm, dtype, report);
  // Agree on the outcome: any rank's failure fails everyone.
  at::Tensor failed = at::full({1}, static_cast<int64_t>(report.failures.size()), at::kLong);
  comm.all_reduce(failed, ReduceOp::Max);
  report.passed = failed.item<int64_t>() == 0;
  if (!report.passed && report.failures.empty()) report.failures.push_back("failed on another rank");
  return report;
}

}  // namespace tessera::dist
