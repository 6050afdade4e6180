// IC(0) and ILU(0): exact on a tridiagonal matrix (no fill to drop), against a dense
// float64 reference of the no-fill elimination on 2D Poisson, applying M^{-1} and M^{-T},
// and as preconditioners of CG and GMRES.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "sla/precond/incomplete_factor.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/solve.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

using detail::csr_of;

/// Dense ILU(0) reference: Gaussian elimination (IKJ) keeping only entries in A's pattern.
std::pair<at::Tensor, at::Tensor> dense_ilu0(const at::Tensor& a) {
  const int64_t n = a.size(0);
  at::Tensor m = a.clone();
  const at::Tensor pattern = a != 0;
  for (int64_t i = 1; i < n; ++i) {
    for (int64_t k = 0; k < i; ++k) {
      if (!pattern[i][k].item<bool>()) continue;
      m[i][k] /= m[k][k];
      for (int64_t j = k + 1; j < n; ++j) {
        if (pattern[i][j].item<bool>()) m[i][j] -= m[i][k] * m[k][j];
      }
    }
  }
  const at::Tensor lower = at::tril(m, -1) + at::eye(n, at::kDouble);
  return {lower, at::triu(m)};
}

SparseTensor tridiagonal(int64_t n) {
  at::manual_seed(7);
  const at::Tensor off = -at::rand({n - 1}, at::kDouble);
  const at::Tensor dense = at::diag(at::full({n}, 3.0, at::kDouble) + at::rand({n}, at::kDouble)) + at::diag(off, 1) +
                           at::diag(off, -1);
  return SparseTensor::from_dense(dense);
}

/// A non-symmetric tridiagonal-plus-pattern matrix: Poisson with a convection term.
SparseTensor convection(int64_t n, double c) {
  const SparseTensor p = poisson2d(n);
  const at::Tensor col = p.col_idx().to(at::kLong), row = p.row_indices();
  at::Tensor skew = at::zeros({p.nnz()}, at::kDouble);
  skew.masked_fill_(col == row + 1, c).masked_fill_(col == row - 1, -c);
  return p.with_values(p.values() + skew);
}

TEST(IncompleteFactor, ExactOnTridiagonal) {
  const SparseTensor a = tridiagonal(30);
  const at::Tensor dense = a.to_dense();
  const auto ic = detail::incomplete_cholesky0(csr_of(a, 0));
  ASSERT_EQ(ic.status, SolveStatus::Converged);
  const at::Tensor l = ic.factor.to_dense();
  EXPECT_LT((l - at::linalg_cholesky(dense)).abs().max().item<double>(), 1e-13);
  const auto ilu = detail::incomplete_lu0(csr_of(a, 0));
  const at::Tensor f = ilu.factor.to_dense();
  const at::Tensor lu = at::mm(at::tril(f, -1) + at::eye(30, at::kDouble), at::triu(f));
  EXPECT_LT((lu - dense).abs().max().item<double>(), 1e-13);
  const at::Tensor r = at::randn({30}, at::kDouble);
  EXPECT_LT((ic.apply(r, false) - at::linalg_solve(dense, r)).abs().max().item<double>(), 1e-12);
  EXPECT_LT((ilu.apply(r, false) - at::linalg_solve(dense, r)).abs().max().item<double>(), 1e-12);
}

TEST(IncompleteFactor, Ilu0MatchesDenseReferenceOnConvectionDiffusion) {
  const SparseTensor a = convection(6, 0.4);
  const at::Tensor dense = a.to_dense();
  auto [lower, upper] = dense_ilu0(dense);
  const auto ilu = detail::incomplete_lu0(csr_of(a, 0));
  ASSERT_EQ(ilu.status, SolveStatus::Converged);
  const at::Tensor f = ilu.factor.to_dense();
  EXPECT_LT((at::tril(f, -1) + at::eye(36, at::kDouble) - lower).abs().max().item<double>(), 1e-13);
  EXPECT_LT((at::triu(f) - upper).abs().max().item<double>(), 1e-13);
  const at::Tensor m = at::mm(lower, upper);
  EXPECT_GT((m - dense).abs().max().item<double>(), 1e-3);              // fill was dropped: not exact
  EXPECT_LT(((m - dense) * (dense != 0)).abs().max().item<double>(), 1e-13);   // exact on the pattern
  const at::Tensor r = at::randn({36}, at::kDouble);
  EXPECT_LT((ilu.apply(r, false) - at::linalg_solve(m, r)).abs().max().item<double>(), 1e-12);
  EXPECT_LT((ilu.apply(r, true) - at::linalg_solve(m.t(), r)).abs().max().item<double>(), 1e-12);
}

TEST(IncompleteFactor, Ic0MatchesScaledIlu0OnPoisson) {
  const SparseTensor a = poisson2d(6);
  auto [lower, upper] = dense_ilu0(a.to_dense());
  const at::Tensor reference = at::mm(lower, at::diag(at::diagonal(upper).sqrt()));   // L_ic = L D^{1/2}
  const auto ic = detail::incomplete_cholesky0(csr_of(a, 0));
  ASSERT_EQ(ic.status, SolveStatus::Converged);
  EXPECT_LT((ic.factor.to_dense() - reference).abs().max().item<double>(), 1e-13);
  const at::Tensor r = at::randn({36}, at::kDouble);
  const at::Tensor m = at::mm(reference, reference.t());
  EXPECT_LT((ic.apply(r, false) - at::linalg_solve(m, r)).abs().max().item<double>(), 1e-12);
}

TEST(IncompleteFactor, PreconditionedKrylovConvergesFaster) {
  at::manual_seed(8);
  SolveOptions o;
  o.backend = Backend::Native;
  o.rtol = 1e-10;
  const SparseTensor spd = poisson2d(40);
  const at::Tensor b = at::rand({1600}, at::kDouble);
  o.method = Method::CG;
  o.preconditioner = Preconditioner::None;
  const int64_t plain = solve(spd, b, o).second.iterations;
  o.preconditioner = Preconditioner::IC0;
  auto [x, info] = solve(spd, b, o);
  EXPECT_EQ(info.status, SolveStatus::Converged);
  EXPECT_LT(info.iterations * 2, plain);
  const SparseTensor ns = convection(40, 0.45);
  o.method = Method::GMRES;
  o.preconditioner = Preconditioner::None;
  const int64_t gmres_plain = solve(ns, b, o).second.iterations;
  o.preconditioner = Preconditioner::ILU0;
  at::Tensor bb = b.clone().requires_grad_();
  auto [y, gi] = solve(ns, bb, o);
  EXPECT_EQ(gi.status, SolveStatus::Converged) << gi.message;
  EXPECT_LT(gi.iterations * 2, gmres_plain);
  y.sum().backward();                                                  // adjoint uses M^{-T}
  const at::Tensor lambda = at::linalg_solve(ns.to_dense().t(), at::ones({1600}, at::kDouble));
  EXPECT_LT((bb.grad() - lambda).abs().max().item<double>(), 1e-7);
}

TEST(IncompleteFactor, Ic0BreakdownIsReportedNotThrown) {
  const SparseTensor a = SparseTensor::from_dense(at::tensor({1.0, 2.0, 2.0, 1.0}, at::kDouble).reshape({2, 2}));
  SolveOptions o;
  o.backend = Backend::Native;
  o.method = Method::CG;
  o.preconditioner = Preconditioner::IC0;
  auto [x, info] = solve(a, at::ones({2}, at::kDouble), o);
  EXPECT_EQ(info.status, SolveStatus::NotPositiveDefinite);
  EXPECT_NE(info.message.find("IC(0)"), std::string::npos);
}

}  // namespace
}  // namespace tessera::sla
