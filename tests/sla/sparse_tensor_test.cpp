// SparseTensor: construction, conversions, index types, validation, differentiable storage.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/sparse_tensor.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

TEST(SparseTensor, FromCooSumsDuplicatesAndSortsRows) {
  // entries (1,0)=2, (0,1)=3, (0,1)=4 (duplicate), (0,0)=1  ->  [[1, 7], [2, 0]]
  at::Tensor v = at::tensor({2.0, 3.0, 4.0, 1.0}, at::kDouble).requires_grad_();
  auto a = SparseTensor::from_coo(v, at::tensor({1, 0, 0, 0}), at::tensor({0, 1, 1, 0}), 2, 2);
  EXPECT_EQ(a.nnz(), 3);
  EXPECT_EQ(a.row_ptr().scalar_type(), at::kInt);
  EXPECT_TRUE(at::equal(a.row_ptr().to(at::kLong), at::tensor({0, 2, 3}, at::kLong)));
  EXPECT_TRUE(at::equal(a.col_idx().to(at::kLong), at::tensor({0, 1, 0}, at::kLong)));
  EXPECT_TRUE(at::allclose(a.to_dense(), at::tensor({1.0, 7.0, 2.0, 0.0}, at::kDouble).reshape({2, 2})));
  // d/dv of sum(w * A): each input entry gets the weight of the position it was summed into
  at::Tensor w = at::tensor({10.0, 20.0, 30.0, 40.0}, at::kDouble).reshape({2, 2});
  (a.to_dense() * w).sum().backward();
  EXPECT_TRUE(at::allclose(v.grad(), at::tensor({30.0, 20.0, 20.0, 10.0}, at::kDouble)));
}

TEST(SparseTensor, DenseRoundTripTransposeDiagonal) {
  at::Tensor d = at::tensor({4.0, 0.0, 1.0, 0.0, 5.0, 0.0, 2.0, 3.0, 6.0}, at::kDouble).reshape({3, 3});
  auto a = SparseTensor::from_dense(d);
  EXPECT_EQ(a.nnz(), 6);
  EXPECT_TRUE(at::equal(a.to_dense(), d));
  EXPECT_TRUE(at::equal(a.transpose().to_dense(), d.t()));
  EXPECT_TRUE(at::equal(a.transpose().transpose().to_dense(), d));
  EXPECT_TRUE(at::equal(a.diagonal(), at::tensor({4.0, 5.0, 6.0}, at::kDouble)));
  EXPECT_EQ(a.to(at::kFloat).values().scalar_type(), at::kFloat);
  CsrMatrix m = a.to_csr_matrix();
  EXPECT_EQ(m.row_ptr.scalar_type(), at::kLong);
  EXPECT_EQ(m.values.scalar_type(), at::kDouble);
  EXPECT_EQ(m.rows, 3);
}

TEST(SparseTensor, TransposeIsDifferentiablePermutation) {
  auto a = testing::random_matrix(7, 0.4, 3.0, false, 1);
  at::Tensor v = a.values().clone().requires_grad_();
  at::Tensor w = at::randn({7, 7}, at::kDouble);
  (a.with_values(v).transpose().to_dense() * w).sum().backward();
  // d/dv sum(w * A^T) = w^T sampled on A's pattern
  at::Tensor expected = w.t().reshape({-1}).index_select(0, a.row_indices() * 7 + a.col_idx().to(at::kLong));
  EXPECT_TRUE(at::allclose(v.grad(), expected));
}

TEST(SparseTensor, BatchedValuesSharePattern) {
  at::Tensor d = at::randn({2, 3, 4, 4}, at::kDouble) * (at::rand({2, 3, 4, 4}) < 0.5).to(at::kDouble);
  auto a = SparseTensor::from_dense(d);
  EXPECT_EQ(a.batch_shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.batch_size(), 6);
  EXPECT_TRUE(at::equal(a.to_dense(), d));
  EXPECT_TRUE(at::equal(a.transpose().to_dense(), d.transpose(-1, -2)));
  EXPECT_TRUE(at::equal(a.diagonal(), at::diagonal(d, 0, -2, -1)));
}

TEST(SparseTensor, SymmetricStorageGradientSumsMirroredEntries) {
  // stored lower triangle: (0,0)=4, (1,0)=-1, (1,1)=4  ->  [[4, -1], [-1, 4]]
  at::Tensor stored = at::tensor({4.0, -1.0, 4.0}, at::kDouble).requires_grad_();
  auto a = SparseTensor::from_symmetric_coo(stored, at::tensor({0, 1, 1}), at::tensor({0, 0, 1}), 2);
  EXPECT_TRUE(at::equal(a.to_dense(), at::tensor({4.0, -1.0, -1.0, 4.0}, at::kDouble).reshape({2, 2})));
  at::Tensor w = at::tensor({1.0, 2.0, 3.0, 5.0}, at::kDouble).reshape({2, 2});
  (a.to_dense() * w).sum().backward();
  EXPECT_TRUE(at::allclose(stored.grad(), at::tensor({1.0, 5.0, 5.0}, at::kDouble)));   // w10 + w01 = 5
  auto skew = SparseTensor::from_symmetric_coo(at::tensor({2.0}, at::kDouble), at::tensor({1}), at::tensor({0}), 2, true);
  EXPECT_TRUE(at::equal(skew.to_dense(), at::tensor({0.0, -2.0, 2.0, 0.0}, at::kDouble).reshape({2, 2})));
}

TEST(SparseTensor, RejectsBadPatterns) {
  at::Tensor v = at::ones({2}, at::kDouble);
  EXPECT_THROW(SparseTensor::from_csr(at::tensor({0, 2}), at::tensor({1, 0}), v, 1, 2), InvalidInput);   // unsorted
  EXPECT_THROW(SparseTensor::from_csr(at::tensor({0, 2}), at::tensor({0, 2}), v, 1, 2), InvalidInput);   // out of range
  EXPECT_THROW(SparseTensor::from_csr(at::tensor({0, 1, 2}), at::tensor({0, 1}), v, 1, 2), DimensionMismatch);
  EXPECT_THROW(SparseTensor::from_coo(v, at::tensor({0, 5}), at::tensor({0, 0}), 2, 2), InvalidInput);
  EXPECT_THROW(SparseTensor::from_coo(at::ones({2}, at::kInt), at::tensor({0, 1}), at::tensor({0, 0}), 2, 2),
               Unsupported);
}

TEST(SparseTensor, PoissonGeneratorsMatchStencil) {
  auto a = poisson2d(3);
  EXPECT_EQ(a.rows(), 9);
  EXPECT_EQ(a.nnz(), 9 + 2 * 2 * 6);   // diagonal + 2 * (horizontal + vertical neighbour pairs)
  at::Tensor d = a.to_dense();
  EXPECT_TRUE(at::equal(d, d.t()));
  EXPECT_EQ(d[4][4].item<double>(), 4.0);
  EXPECT_EQ(d[4][1].item<double>(), -1.0);
  EXPECT_EQ(d[4][3].item<double>(), -1.0);
  EXPECT_EQ(d[2][3].item<double>(), 0.0);   // no wrap-around between grid rows
  auto b = poisson3d(3, at::kFloat);
  EXPECT_EQ(b.rows(), 27);
  EXPECT_EQ(b.nnz(), 27 + 2 * 3 * 18);
  EXPECT_EQ(b.dtype(), at::kFloat);
  EXPECT_EQ(b.diagonal()[13].item<float>(), 6.0f);
  // row sums: 6 minus the number of neighbours, so the centre row sums to 0
  EXPECT_EQ(b.to_dense().sum(1)[13].item<float>(), 0.0f);
}

}  // namespace
}  // namespace tessera::sla
