// SparseTensorList: block-diagonal round trip, operations over the list against the
// single-matrix ones, and gradients through the list by finite differences.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/sparse_tensor_list.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

using testing::random_matrix;

SparseTensorList make_list() {
  return SparseTensorList({random_matrix(12, 0.2, 3.0, false, 1), poisson2d(4), random_matrix(9, 0.3, 4.0, true, 2)});
}

TEST(SparseTensorList, BlockDiagonalRoundTrip) {
  SparseTensorList list = make_list();
  SparseTensor big = list.to_block_diagonal();
  ASSERT_EQ(big.rows(), 12 + 16 + 9);
  at::Tensor dense = big.to_dense();
  int64_t off = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const int64_t n = list[i].rows();
    EXPECT_TRUE(at::equal(dense.narrow(0, off, n).narrow(1, off, n), list[i].to_dense()));
    off += n;
  }
  EXPECT_NEAR(dense.abs().sum().item<double>(), [&] {
    double s = 0;
    for (const auto& a : list.items()) s += a.to_dense().abs().sum().item<double>();
    return s;
  }(), 1e-10);   // nothing outside the blocks
  SparseTensorList back = SparseTensorList::from_block_diagonal(big, {12, 16, 9});
  for (size_t i = 0; i < list.size(); ++i) EXPECT_TRUE(at::equal(back[i].to_dense(), list[i].to_dense()));
  EXPECT_THROW(SparseTensorList::from_block_diagonal(big, {12, 16, 8}), InvalidInput);
  EXPECT_THROW(SparseTensorList::from_block_diagonal(big, {10, 18, 9}), InvalidInput);   // entries cross blocks
}

TEST(SparseTensorList, OperationsMatchSingleMatrixAndBlockDiagonal) {
  TESSERA_SKIP_WITHOUT_SUITESPARSE();   // logdet
  SparseTensorList list = make_list();
  std::vector<at::Tensor> x;
  for (const auto& a : list.items()) x.push_back(at::randn({a.rows()}, at::kDouble));
  auto y = list.matvec(x);
  auto [sol, infos] = list.solve(y);
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_LT((sol[i] - x[i]).abs().max().item<double>(), 1e-10);
    EXPECT_EQ(infos[i].status, SolveStatus::Converged);
  }
  auto [ld, dinfos] = list.logdet();
  ASSERT_EQ(ld.size(0), 3);
  // log det of the block-diagonal matrix = sum of the blocks' (when each is positive)
  auto big = slogdet(list.to_block_diagonal());
  double sum = 0.0;
  for (const auto& a : list.items()) sum += slogdet(a).logabsdet.item<double>();
  EXPECT_NEAR(big.logabsdet.item<double>(), sum, 1e-10);
  SparseTensorList sym({poisson2d(5), random_matrix(30, 0.1, 0.0, true, 3)});
  EigshOptions o;
  o.k = 2;
  auto eig = sym.eigsh(o);
  for (size_t i = 0; i < sym.size(); ++i) {
    EXPECT_EQ(eig[i].info.status, SolveStatus::Converged);
    at::Tensor ref = at::linalg_eigvalsh(sym[i].to_dense()).narrow(0, sym[i].rows() - 2, 2);
    EXPECT_LT((eig[i].eigenvalues - ref).abs().max().item<double>(), 1e-9);
  }
  EXPECT_THROW(list.matvec({x[0]}), DimensionMismatch);
}

TEST(SparseTensorList, GradientsThroughTheListMatchFiniteDifferences) {
  TESSERA_SKIP_WITHOUT_SUITESPARSE();   // logdet
  SparseTensorList base = make_list();
  // all values as one vector p (the block-diagonal values): L = sum_i <w_i, A_i^{-1} b_i> + sum_i logdet A_i
  SparseTensor big = base.to_block_diagonal();
  std::vector<int64_t> sizes{12, 16, 9};
  std::vector<at::Tensor> b, w;
  for (int64_t n : sizes) {
    b.push_back(at::randn({n}, at::kDouble));
    w.push_back(at::randn({n}, at::kDouble));
  }
  auto loss = [&](const at::Tensor& p) {
    SparseTensorList list = SparseTensorList::from_block_diagonal(big.with_values(p), sizes);
    at::Tensor l = list.logdet().first.sum();
    auto xs = list.solve(b).first;
    for (size_t i = 0; i < xs.size(); ++i) l = l + (xs[i] * w[i]).sum();
    return l;
  };
  at::Tensor p = big.values().clone().requires_grad_();
  loss(p).backward();
  // central differences on a sample of the entries (every block is hit)
  at::Tensor sample = at::arange(0, big.nnz(), 7);
  at::Tensor fd = at::zeros({sample.size(0)}, at::kDouble);
  const double h = 1e-5;
  for (int64_t k = 0; k < sample.size(0); ++k) {
    at::Tensor plus = big.values().clone(), minus = big.values().clone();
    plus[sample[k]] += h;
    minus[sample[k]] -= h;
    fd[k] = (loss(plus).item<double>() - loss(minus).item<double>()) / (2 * h);
  }
  at::Tensor ad = p.grad().index_select(0, sample);
  EXPECT_LT((ad - fd).norm().item<double>() / fd.norm().item<double>(), 1e-6);
}

}  // namespace
}  // namespace tessera::sla
