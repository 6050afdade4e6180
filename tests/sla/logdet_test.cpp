// det / logdet / slogdet: values against dense slogdet, the gradient (A^{-T} on the
// pattern, by selected inversion) against the dense inverse and finite differences,
// batches, and singular / negative / bad input.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "sla/det/ldu.h"
#include "tessera/core/error.h"
#include "tessera/sla/determinant.h"
#include "tessera/sla/generators.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

using testing::random_matrix;

/// (A^{-T})_ij on A's pattern from the dense inverse.
at::Tensor dense_inverse_transpose_on_pattern(const SparseTensor& a) {
  at::Tensor inv_t = at::linalg_inv(a.to_dense().detach()).t();
  return inv_t.index({a.row_indices(), a.col_idx().to(at::kLong)});
}

void check_value_and_gradient(const SparseTensor& a, const std::string& backend) {
  at::Tensor v = a.values().clone().requires_grad_();
  auto r = slogdet(a.with_values(v));
  ASSERT_EQ(r.info.status, SolveStatus::Converged) << r.info.message;
  EXPECT_EQ(r.info.backend, backend);
  auto [sign, lad] = at::linalg_slogdet(a.to_dense().detach());
  EXPECT_EQ(r.sign.item<double>(), sign.item<double>());
  EXPECT_NEAR(r.logabsdet.item<double>(), lad.item<double>(), 1e-10 * std::max(1.0, std::abs(lad.item<double>())));
  r.logabsdet.backward();
  at::Tensor expected = dense_inverse_transpose_on_pattern(a);
  EXPECT_LT((v.grad() - expected).abs().max().item<double>(), 1e-10 * expected.abs().max().item<double>());
}

TEST(Logdet, SpdMatrixByCholmodMatchesDense) {
  TESSERA_SKIP_WITHOUT_SUITESPARSE();
  check_value_and_gradient(random_matrix(60, 0.05, 4.0, /*symmetric=*/true, 11), "cholmod");
  check_value_and_gradient(poisson2d(10), "cholmod");
}

TEST(Logdet, NonSymmetricMatrixByUmfpackMatchesDense) {
  TESSERA_SKIP_WITHOUT_SUITESPARSE();
  check_value_and_gradient(random_matrix(60, 0.05, 3.0, /*symmetric=*/false, 12), "umfpack");
  // negative determinant: slogdet gives the sign, logdet reports it
  at::Tensor d = random_matrix(30, 0.1, 3.0, false, 13).to_dense();
  d[0][0] = -d[0][0] - 5.0;   // one negative pivot-dominant row
  SparseTensor neg = SparseTensor::from_dense(d);
  check_value_and_gradient(neg, "umfpack");
  auto [ld, info] = logdet(neg);
  EXPECT_TRUE(std::isnan(ld.item<double>()));
  EXPECT_EQ(info.status, SolveStatus::NotPositiveDefinite);
}

TEST(Logdet, GradientMatchesFiniteDifferences) {
  TESSERA_SKIP_WITHOUT_SUITESPARSE();
  for (bool symmetric : {true, false}) {
    SparseTensor a = random_matrix(25, 0.1, 3.0, symmetric, 21);
    at::Tensor v = a.values().clone().requires_grad_();
    logdet(a.with_values(v)).first.backward();
    auto f = [&](const at::Tensor& p) { return logdet(a.with_values(p)).first.item<double>(); };
    EXPECT_LT(testing::fd_relative_error(f, a.values(), v.grad()), 1e-6) << "symmetric " << symmetric;
  }
}

TEST(Logdet, DetAndBatchedValues) {
  TESSERA_SKIP_WITHOUT_SUITESPARSE();
  SparseTensor a = random_matrix(20, 0.1, 2.0, false, 31);
  at::Tensor values = at::stack({a.values(), a.values() * 1.5}).requires_grad_();   // [2, nnz]
  auto [d, info] = det(a.with_values(values));
  ASSERT_EQ(d.sizes(), at::IntArrayRef({2}));
  at::Tensor dense = a.with_values(values.detach()).to_dense();
  EXPECT_LT(((d.detach() - at::linalg_det(dense)) / at::linalg_det(dense)).abs().max().item<double>(), 1e-10);
  d.sum().backward();   // d det / dA = det A^{-T}
  at::Tensor inv_t = at::linalg_inv(dense).transpose(1, 2);
  at::Tensor expected = inv_t.index({at::indexing::Slice(), a.row_indices(), a.col_idx().to(at::kLong)}) *
                        at::linalg_det(dense).unsqueeze(1);
  EXPECT_LT((values.grad() - expected).abs().max().item<double>(), 1e-9 * expected.abs().max().item<double>());
}

TEST(Logdet, SelectedInverseEqualsTheDenseInverseOnTheFactorPattern) {
  SparseTensor a = random_matrix(50, 0.04, 3.0, false, 41);
  const CsrMatrix csr = a.to_csr_matrix();
  const detail::LduSymbolic s = detail::ldu_analyze(csr);
  const detail::LduNumeric f = detail::ldu_factorize(s, csr);
  ASSERT_TRUE(f.ok);
  EXPECT_GT(s.col_ptr.back(), (a.nnz() - a.rows()) / 2);   // the factor has fill
  const detail::SelectedInverse z = detail::selected_inverse(s, f);
  at::Tensor inv = at::linalg_inv(a.to_dense());          // A^{-1}; Z = (P A P^T)^{-1}
  double worst = 0.0;
  for (int64_t j = 0; j < s.n; ++j) {
    worst = std::max(worst, std::abs(z.zd[j] - inv[s.perm[j]][s.perm[j]].item<double>()));
    for (int64_t p = s.col_ptr[j]; p < s.col_ptr[j + 1]; ++p) {
      const int64_t i = s.row_idx[p];
      worst = std::max(worst, std::abs(z.zl[p] - inv[s.perm[i]][s.perm[j]].item<double>()));   // Z_ij
      worst = std::max(worst, std::abs(z.zu[p] - inv[s.perm[j]][s.perm[i]].item<double>()));   // Z_ji
    }
  }
  EXPECT_LT(worst, 1e-12);
}

TEST(Logdet, SingularAndBadInput) {
  TESSERA_SKIP_WITHOUT_SUITESPARSE();
  at::Tensor d = random_matrix(10, 0.3, 2.0, false, 51).to_dense();
  d[3] = d[5] * 2.0;   // two dependent rows
  auto r = slogdet(SparseTensor::from_dense(d));
  EXPECT_EQ(r.info.status, SolveStatus::Singular);
  EXPECT_EQ(r.sign.item<double>(), 0.0);
  EXPECT_TRUE(std::isinf(r.logabsdet.item<double>()));
  // a zero diagonal entry: LU with pivoting gives the value; the unpivoted LDU of the
  // backward pass cannot, and says so
  at::Tensor cyc = at::tensor({0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 3.0}, at::kDouble).reshape({3, 3});
  at::Tensor cv = SparseTensor::from_dense(cyc).values().clone().requires_grad_();
  auto c = slogdet(SparseTensor::from_dense(cyc).with_values(cv));
  EXPECT_EQ(c.info.status, SolveStatus::Converged);
  EXPECT_NEAR(c.logabsdet.item<double>(), std::get<1>(at::linalg_slogdet(cyc)).item<double>(), 1e-10);
  EXPECT_THROW(c.logabsdet.backward(), Unsupported);
  EXPECT_THROW(logdet(SparseTensor::from_dense(at::ones({3, 4}, at::kDouble))), DimensionMismatch);
  at::Tensor nan = at::eye(3, at::kDouble);
  nan[1][1] = std::nan("");
  EXPECT_THROW(logdet(SparseTensor::from_dense(nan)), InvalidInput);
  DetOptions o;
  o.backend = Backend::Superlu;   // a backend without a determinant
  EXPECT_THROW(logdet(poisson2d(3), o), InvalidInput);
}

}  // namespace
}  // namespace tessera::sla
