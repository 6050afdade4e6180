// Gradients through collectives across ranks equal the closed-form sums over ranks.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "tessera/dist/communicator.h"
#include "tessera/dist/differentiable.h"

namespace tessera::dist {
namespace {

TEST(DifferentiableCollectives, AllGatherBackwardIsReduceScatter) {
  auto comm = world();
  const int r = comm->rank(), p = comm->size();
  // rank r owns r + 1 rows; full has T = P (P + 1) / 2 rows
  at::Tensor x = at::randn({r + 1, 2}, at::kDouble).set_requires_grad(true);
  at::Tensor full = differentiable::all_gather(comm, x);
  const int64_t total = p * (p + 1) / 2;
  ASSERT_EQ(full.size(0), total);
  // loss_r = sum((r + 1) * w * full), w = arange;  d(sum_q loss_q)/dx_r = P(P+1)/2 * w[block r]
  at::Tensor w = at::arange(total * 2, at::kDouble).reshape({total, 2});
  at::Tensor loss = ((r + 1) * w * full).sum();
  loss.backward();
  at::Tensor expected = w.narrow(0, r * (r + 1) / 2, r + 1) * (p * (p + 1) / 2.0);
  EXPECT_TRUE(at::allclose(x.grad(), expected, 1e-14, 0)) << x.grad() << expected;
}

TEST(DifferentiableCollectives, AllGatherForwardMatchesPlainCollective) {
  auto comm = world();
  at::Tensor x = at::full({2, 3}, comm->rank(), at::kFloat).set_requires_grad(true);
  at::Tensor full = differentiable::all_gather(comm, x);
  EXPECT_TRUE(at::equal(full.detach(), comm->all_gather(x.detach())));
  EXPECT_TRUE(full.requires_grad());
  full.sum().backward();
  EXPECT_TRUE(at::equal(x.grad(), at::full({2, 3}, comm->size(), at::kFloat)));
}

TEST(DifferentiableCollectives, AllReduceSumBackwardIsAllReduce) {
  auto comm = world();
  const int r = comm->rank(), p = comm->size();
  at::Tensor x = (at::arange(4, at::kDouble) + r).set_requires_grad(true);
  at::Tensor s = differentiable::all_reduce_sum(comm, x);  // s = sum_q x_q
  // loss_r = (r + 1) * sum(s^2)  =>  d(sum_q loss_q)/dx_r = 2 s * sum_q (q + 1)
  at::Tensor loss = (r + 1) * s.pow(2).sum();
  loss.backward();
  at::Tensor s_expected = at::arange(4, at::kDouble) * p + p * (p - 1) / 2.0;
  EXPECT_TRUE(at::allclose(s.detach(), s_expected, 1e-14, 0));
  EXPECT_TRUE(at::allclose(x.grad(), 2 * s_expected * (p * (p + 1) / 2.0), 1e-14, 0));
}

TEST(DifferentiableCollectives, ReplicateIsACopyWhoseGradientIsSummed) {
  auto comm = world();
  const int r = comm->rank(), p = comm->size();
  at::Tensor x = at::arange(3, at::kDouble).set_requires_grad(true);  // alike on every rank
  at::Tensor y = differentiable::replicate(comm, x);
  EXPECT_TRUE(at::equal(y.detach(), x.detach()));
  // loss_r = (r + 1) * sum(y^2)  =>  d(sum_q loss_q)/dx = 2 x * sum_q (q + 1) on every rank
  ((r + 1) * y.pow(2)).sum().backward();
  EXPECT_TRUE(at::allclose(x.grad(), 2 * x.detach() * (p * (p + 1) / 2.0), 1e-14, 0)) << x.grad();
}

TEST(DifferentiableCollectives, GradientMatchesFiniteDifferences) {
  // L = sum_r sum(sin(all_gather(x)) * c_r): central differences on rank 0's first entry
  auto comm = world();
  const int r = comm->rank();
  at::Tensor x0 = at::full({2}, 0.3 + r, at::kDouble);
  at::Tensor c = at::full({2 * comm->size()}, 1.0 + r, at::kDouble);
  auto total_loss = [&](const at::Tensor& x) {
    at::Tensor l = (at::sin(comm->all_gather(x.contiguous())) * c).sum().reshape({1}).contiguous();
    comm->all_reduce(l, ReduceOp::Sum);
    return l.item<double>();
  };
  at::Tensor x = x0.clone().set_requires_grad(true);
  (at::sin(differentiable::all_gather(comm, x)) * c).sum().backward();
  const double h = 1e-6;
  at::Tensor bump = at::zeros({2}, at::kDouble);
  if (r == 0) bump[0] = h;
  double fd = (total_loss(x0 + bump) - total_loss(x0 - bump)) / (2 * h);
  if (r == 0) EXPECT_NEAR(x.grad()[0].item<double>(), fd, 1e-8 * std::max(1.0, std::abs(fd)));
}

}  // namespace
}  // namespace tessera::dist
