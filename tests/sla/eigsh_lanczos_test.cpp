// The single-vector thick-restart Lanczos engine and its basis kernels on raw arrays:
// kernels against ATen, Ritz pairs against dense eigh, restarts, and maxiter.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "sla/eigsh/basis_kernels.h"
#include "sla/eigsh/lanczos.h"
#include "tessera/sla/eigsh.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

TEST(BasisKernels, MatchAtenOnEveryColumnCountAndAboveTheThreadThreshold) {
  at::manual_seed(5);
  for (int64_t n : {1, 7, 300, 70001}) {
    for (int64_t j : {1, 3, 4, 9}) {
      at::Tensor v = at::randn({j, n}, at::kDouble);   // rows = the columns of V [n, j]
      at::Tensor w = at::randn({n}, at::kDouble);
      at::Tensor h = at::empty({j}, at::kDouble);
      detail::basis_inner(v.data_ptr<double>(), n, j, w.data_ptr<double>(), h.data_ptr<double>());
      EXPECT_TRUE(at::allclose(h, at::mv(v, w), 1e-12, 1e-10)) << n << " " << j;
      at::Tensor w2 = w.clone();
      detail::basis_subtract(v.data_ptr<double>(), n, j, h.data_ptr<double>(), w2.data_ptr<double>());
      EXPECT_TRUE(at::allclose(w2, w - at::mv(v.t(), h), 1e-12, 1e-9)) << n << " " << j;
      EXPECT_NEAR(detail::vector_norm(w.data_ptr<double>(), n), w.norm().item<double>(), 1e-10 * std::sqrt(n));
    }
  }
}

/// y = A x for a dense symmetric A [n, n].
detail::VectorOperator dense_operator(const at::Tensor& a) {
  return [a](const double* x, double* y) {
    const int64_t n = a.size(0);
    at::Tensor xt = at::from_blob(const_cast<double*>(x), {n}, at::kDouble);
    at::Tensor yt = at::mv(a, xt);
    std::copy(yt.data_ptr<double>(), yt.data_ptr<double>() + n, y);
  };
}

TEST(ThickRestartLanczos, FindsTheWantedEndsOfADenseSpectrumWithRestarts) {
  const int64_t n = 200;
  SparseTensor s = testing::random_matrix(n, 0.05, 0.0, /*symmetric=*/true, 17);
  at::Tensor a = s.to_dense().detach();
  at::Tensor evals = at::linalg_eigvalsh(a);   // ascending
  for (detail::RitzOrder order : {detail::RitzOrder::LargestAlgebraic, detail::RitzOrder::SmallestAlgebraic,
                                  detail::RitzOrder::LargestMagnitude}) {
    detail::LanczosParams p;
    p.k = 5;
    p.ncv = 12;   // small space: several restarts
    p.tol = 1e-12;
    p.order = order;
    detail::RitzPairs r = detail::thick_restart_lanczos(dense_operator(a), n, p);
    ASSERT_TRUE(r.converged) << r.message;
    EXPECT_GT(r.iterations, 1);
    at::Tensor want = order == detail::RitzOrder::LargestAlgebraic    ? evals.flip(0).narrow(0, 0, 5)
                      : order == detail::RitzOrder::SmallestAlgebraic ? evals.narrow(0, 0, 5)
                                                                      : evals.index_select(0, std::get<1>(evals.abs().sort(0, true)).narrow(0, 0, 5));
    EXPECT_LT((r.theta - want).abs().max().item<double>(), 1e-9) << r.theta << want;
    at::Tensor resid = at::mm(a, r.vectors) - r.vectors * r.theta.unsqueeze(0);
    EXPECT_LT(resid.abs().max().item<double>(), 1e-8);
    EXPECT_LT((at::mm(r.vectors.t(), r.vectors) - at::eye(5, at::kDouble)).abs().max().item<double>(), 1e-10);
  }
}

TEST(ThickRestartLanczos, ReportsNotConvergedAfterMaxiterRestarts) {
  const int64_t n = 400;
  at::Tensor a = testing::random_matrix(n, 0.05, 0.0, /*symmetric=*/true, 2).to_dense().detach();
  detail::LanczosParams p;
  p.k = 6;
  p.ncv = 8;
  p.maxiter = 2;
  p.tol = 1e-14;
  detail::RitzPairs r = detail::thick_restart_lanczos(dense_operator(a), n, p);
  EXPECT_FALSE(r.converged);
  EXPECT_FALSE(r.theta.defined());
  EXPECT_FALSE(r.message.empty());
  EXPECT_EQ(r.iterations, 2);
}

TEST(ThickRestartLanczos, ContinuesPastAnInvariantSubspace) {
  // three distinct eigenvalues: every Krylov space of A has dimension 3, so the fourth
  // step finds an invariant subspace and continues from a random direction
  const int64_t n = 60;
  at::Tensor d = at::ones({n}, at::kDouble);
  d[7] = 5.0;
  d[30] = 4.0;
  at::Tensor a = at::diag(d);
  detail::LanczosParams p;
  p.k = 2;
  p.ncv = 10;
  p.tol = 1e-12;
  detail::RitzPairs r = detail::thick_restart_lanczos(dense_operator(a), n, p);
  ASSERT_TRUE(r.converged) << r.message;
  EXPECT_LT((r.theta - at::tensor({5.0, 4.0}, at::kDouble)).abs().max().item<double>(), 1e-10);
  EXPECT_LT((at::mm(r.vectors.t(), r.vectors) - at::eye(2, at::kDouble)).abs().max().item<double>(), 1e-10);
}

}  // namespace
}  // namespace tessera::sla
