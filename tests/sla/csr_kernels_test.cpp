// CSR kernels and their autograd: against dense references, batched, and by finite differences.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "sla/kernels/csr_kernels.h"
#include "tessera/core/error.h"
#include "tessera/sla/sparse_tensor.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

TEST(CsrKernels, HandComputedMatvec) {
  // [[2, 0, 1], [0, 3, 0]] @ [1, 2, 3] = [5, 6];  A^T [1, 2] = [2, 6, 1]
  auto a = SparseTensor::from_dense(at::tensor({2.0, 0.0, 1.0, 0.0, 3.0, 0.0}, at::kDouble).reshape({2, 3}));
  EXPECT_TRUE(at::equal(matvec(a, at::tensor({1.0, 2.0, 3.0}, at::kDouble)), at::tensor({5.0, 6.0}, at::kDouble)));
  EXPECT_TRUE(at::equal(rmatvec(a, at::tensor({1.0, 2.0}, at::kDouble)), at::tensor({2.0, 6.0, 1.0}, at::kDouble)));
}

TEST(CsrKernels, MatchDenseForVectorsMatricesBatchesAndDtypes) {
  for (auto dtype : {at::kDouble, at::kFloat}) {
    at::Tensor d = (at::randn({3, 9, 7}) * (at::rand({3, 9, 7}) < 0.4).to(at::kFloat)).to(dtype);
    auto a = SparseTensor::from_dense(d);
    const double tol = dtype == at::kDouble ? 1e-12 : 1e-5;
    at::Tensor x = at::randn({7}, dtype), xk = at::randn({7, 4}, dtype), xb = at::randn({3, 7, 2}, dtype);
    EXPECT_TRUE(at::allclose(matvec(a, x), at::matmul(d, x), tol, tol));
    EXPECT_TRUE(at::allclose(matvec(a, xk), at::matmul(d, xk), tol, tol));
    EXPECT_TRUE(at::allclose(matvec(a, xb), at::matmul(d, xb), tol, tol));
    at::Tensor y = at::randn({3, 9}, dtype);
    EXPECT_TRUE(at::allclose(rmatvec(a, y), at::matmul(d.transpose(1, 2), y.unsqueeze(-1)).squeeze(-1), tol, tol));
  }
}

TEST(CsrKernels, OpenMpKernelsMatchReference) {
  auto a = testing::random_matrix(40, 0.2, 0.0, false, 3);
  at::Tensor v = at::randn({2, a.nnz()}, at::kDouble), x = at::randn({2, 40, 3}, at::kDouble);
  const auto& tp = a.transposed_pattern();
  EXPECT_TRUE(at::allclose(detail::csr_spmm(a.row_ptr(), a.col_idx(), {}, v, x, 40),
                           detail::csr_spmm_reference(a.row_ptr(), a.col_idx(), {}, v, x, 40)));
  EXPECT_TRUE(at::allclose(detail::csr_spmm(tp.row_ptr, tp.col_idx, tp.perm, v, x, 40),
                           detail::csr_spmm_reference(tp.row_ptr, tp.col_idx, tp.perm, v, x, 40)));
  // int64 indices (used beyond 2^31 entries) through the same kernels
  at::Tensor rp64 = a.row_ptr().to(at::kLong), ci64 = a.col_idx().to(at::kLong);
  EXPECT_TRUE(at::allclose(detail::csr_spmm(rp64, ci64, {}, v, x, 40),
                           detail::csr_spmm(a.row_ptr(), a.col_idx(), {}, v, x, 40)));
  at::Tensor l = at::randn({1, 40, 3}, at::kDouble);
  EXPECT_TRUE(at::allclose(detail::csr_sampled_dot(rp64, ci64, l, x),
                           detail::csr_sampled_dot(a.row_ptr(), a.col_idx(), l, x)));
  EXPECT_TRUE(at::allclose(detail::csr_sampled_dot(a.row_ptr(), a.col_idx(), l, x),
                           detail::csr_sampled_dot_reference(a.row_ptr(), a.col_idx(), l, x)));
}

TEST(CsrKernels, GradientsMatchFiniteDifferences) {
  auto a = testing::random_matrix(8, 0.4, 1.0, false, 5);
  at::Tensor x0 = at::randn({8, 2}, at::kDouble), w = at::randn({8, 2}, at::kDouble);
  for (bool transpose : {false, true}) {
    auto op = [&](const SparseTensor& m, const at::Tensor& x) { return transpose ? rmatvec(m, x) : matvec(m, x); };
    at::Tensor v = a.values().clone().requires_grad_(), x = x0.clone().requires_grad_();
    (op(a.with_values(v), x) * w).sum().backward();
    auto loss_v = [&](const at::Tensor& p) { return (op(a.with_values(p), x0) * w).sum().item<double>(); };
    auto loss_x = [&](const at::Tensor& p) { return (op(a, p) * w).sum().item<double>(); };
    EXPECT_LT(testing::fd_relative_error(loss_v, a.values(), v.grad()), 1e-6);
    EXPECT_LT(testing::fd_relative_error(loss_x, x0, x.grad()), 1e-6);
    // the values gradient lives on the pattern only: compare with the dense gradient there
    at::Tensor dense = a.to_dense().clone().requires_grad_();
    at::Tensor yd = transpose ? at::matmul(dense.t(), x0) : at::matmul(dense, x0);
    (yd * w).sum().backward();
    at::Tensor on_pattern = dense.grad().reshape({-1}).index_select(0, a.row_indices() * 8 + a.col_idx().to(at::kLong));
    EXPECT_TRUE(at::allclose(v.grad(), on_pattern));
  }
}

TEST(CsrKernels, BatchedValuesWithSharedVectorGradient) {
  at::Tensor d = at::randn({3, 5, 5}, at::kDouble) * (at::rand({3, 5, 5}) < 0.6).to(at::kDouble);
  auto a = SparseTensor::from_dense(d);
  at::Tensor x = at::randn({5}, at::kDouble).requires_grad_();
  matvec(a, x).sum().backward();
  // d/dx sum_b sum_i (A_b x)_i = sum_b A_b^T 1
  EXPECT_TRUE(at::allclose(x.grad(), d.sum(0).sum(0)));
}

TEST(CsrKernels, RejectsMismatchedShapes) {
  auto a = testing::random_matrix(4, 0.5, 1.0, false, 2);
  EXPECT_THROW(matvec(a, at::ones({5}, at::kDouble)), DimensionMismatch);
  EXPECT_THROW(matvec(a, at::ones({4}, at::kFloat)), InvalidInput);
}

}  // namespace
}  // namespace tessera::sla
