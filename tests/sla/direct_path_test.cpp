// The direct-solver path of solve() with a dense fake backend behind the backend interface:
// one factorisation per matrix, one transposed solve per backward pass, Cholesky -> LU
// fallback, singular matrices reported, gradients by finite differences.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "sla/backend_lookup.h"
#include "tessera/core/error.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/solve.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

struct Counters {
  int factorize = 0;
  int solve = 0;
  int solve_transpose = 0;
};

class FakeFactorization : public Factorization {
 public:
  FakeFactorization(at::Tensor a, Method m, SolveStatus s, std::string backend, Counters* c)
      : a_(std::move(a)), method_(m), status_(s), backend_(std::move(backend)), counters_(c) {}
  SolveStatus status() const override { return status_; }
  at::Tensor solve(const at::Tensor& b, bool transpose) const override {
    ++(transpose ? counters_->solve_transpose : counters_->solve);
    return at::linalg_solve(transpose ? a_.t() : a_, b);
  }
  Method method() const override { return method_; }
  std::string backend() const override { return backend_; }

 private:
  at::Tensor a_;
  Method method_;
  SolveStatus status_;
  std::string backend_;
  Counters* counters_;
};

/// "cholmod" offers Cholesky only, "umfpack" LU only; both factorise densely.
class FakeBackend : public DirectBackend {
 public:
  FakeBackend(std::string name, Counters* c) : name_(std::move(name)), counters_(c) {}
  std::string name() const override { return name_; }
  bool supports(Method m) const override { return name_ == "cholmod" ? m == Method::Cholesky : m == Method::LU; }
  std::unique_ptr<Factorization> factorize(const CsrMatrix& csr, Method m) const override {
    ++counters_->factorize;
    at::Tensor dense = at::zeros({csr.rows, csr.cols}, at::kDouble);
    at::Tensor rows = at::repeat_interleave(at::arange(csr.rows, at::kLong), csr.row_ptr.diff());
    dense.index_put_({rows, csr.col_idx}, csr.values);
    SolveStatus s = SolveStatus::Converged;
    if (m == Method::Cholesky && std::get<1>(at::linalg_cholesky_ex(dense)).item<int>() != 0) {
      s = SolveStatus::NotPositiveDefinite;
    } else if (at::linalg_svdvals(dense).min().item<double>() < 1e-12 * at::linalg_svdvals(dense).max().item<double>()) {
      s = SolveStatus::Singular;
    }
    return std::make_unique<FakeFactorization>(dense, m, s, name_, counters_);
  }

 private:
  std::string name_;
  Counters* counters_;
};

class DirectPath : public ::testing::Test {
 protected:
  void SetUp() override {
    detail::set_backend_lookup_for_testing(
        {[this](Backend backend) -> std::unique_ptr<DirectBackend> {
           TESSERA_CHECK(backend == Backend::Cholmod || backend == Backend::Umfpack, NotCompiled, to_string(backend),
                         " not in the fake");
           return std::make_unique<FakeBackend>(to_string(backend), &counters_);
         },
         [] { return std::vector<Backend>{Backend::Cholmod, Backend::Umfpack}; }});
  }
  void TearDown() override { detail::set_backend_lookup_for_testing({}); }
  Counters counters_;
};

TEST_F(DirectPath, SpdFactorisesOnceAndBackwardSolvesTransposeOnce) {
  auto a = poisson2d(5);
  at::Tensor v = a.values().clone().requires_grad_(), b = at::randn({25, 3}, at::kDouble).requires_grad_();
  auto [x, info] = solve(a.with_values(v), b);
  EXPECT_EQ(info.backend, "cholmod");
  EXPECT_EQ(info.method, Method::Cholesky);
  EXPECT_EQ(info.status, SolveStatus::Converged);
  EXPECT_LT(info.residual, 1e-12);
  EXPECT_EQ(counters_.factorize, 1);   // three right-hand sides, one factorisation
  EXPECT_EQ(counters_.solve, 1);
  at::Tensor w = at::randn({25, 3}, at::kDouble);
  (x * w).sum().backward();
  EXPECT_EQ(counters_.factorize, 1);   // the backward pass reuses it
  EXPECT_EQ(counters_.solve_transpose, 1);
  auto loss_v = [&](const at::Tensor& p) { return (solve(a.with_values(p), b.detach()).first * w).sum().item<double>(); };
  EXPECT_LT(testing::fd_relative_error(loss_v, a.values(), v.grad()), 1e-6);
}

TEST_F(DirectPath, NonSymmetricUsesLu) {
  auto a = testing::random_matrix(9, 0.3, 3.0, false, 31);
  auto [x, info] = solve(a, at::randn({9}, at::kDouble));
  EXPECT_EQ(info.backend, "umfpack");
  EXPECT_EQ(info.method, Method::LU);
  EXPECT_EQ(info.status, SolveStatus::Converged);
}

TEST_F(DirectPath, IndefiniteSpdCandidateFallsBackFromCholeskyToLu) {
  // symmetric, positive diagonal, but indefinite: [[1, 2], [2, 1]] has eigenvalues 3 and -1
  auto a = SparseTensor::from_dense(at::tensor({1.0, 2.0, 2.0, 1.0}, at::kDouble).reshape({2, 2}));
  ASSERT_TRUE(detect_properties(a).spd_candidate());
  auto [x, info] = solve(a, at::tensor({3.0, 3.0}, at::kDouble));
  EXPECT_EQ(info.status, SolveStatus::Converged);
  EXPECT_EQ(info.method, Method::LU);
  EXPECT_NE(info.message.find("fell back"), std::string::npos) << info.message;
  EXPECT_TRUE(at::allclose(x, at::ones({2}, at::kDouble)));
  SolveOptions named;
  named.backend = Backend::Cholmod;
  named.method = Method::Cholesky;   // named: no fallback
  EXPECT_EQ(solve(a, at::tensor({3.0, 3.0}, at::kDouble), named).second.status, SolveStatus::NotPositiveDefinite);
}

TEST_F(DirectPath, SingularIsReportedWithNaN) {
  auto a = SparseTensor::from_dense(at::tensor({1.0, 2.0, 0.0, 2.0, 4.0, 0.0, 0.0, 0.0, 1.0}, at::kDouble).reshape({3, 3}));
  auto [x, info] = solve(a, at::ones({3}, at::kDouble));
  EXPECT_EQ(info.status, SolveStatus::Singular);
  EXPECT_TRUE(at::isnan(x).all().item<bool>());
}

/// Reports success but solves with a wrong matrix: the residual check must catch it.
class LyingFactorization : public FakeFactorization {
 public:
  using FakeFactorization::FakeFactorization;
  at::Tensor solve(const at::Tensor& b, bool transpose) const override { return b * 1e3; }
};

TEST_F(DirectPath, LargeResidualAfterDirectSolveIsReportedSingular) {
  detail::set_backend_lookup_for_testing(
      {[this](Backend backend) -> std::unique_ptr<DirectBackend> {
         struct Lying : FakeBackend {
           using FakeBackend::FakeBackend;
           std::unique_ptr<Factorization> factorize(const CsrMatrix& csr, Method m) const override {
             return std::make_unique<LyingFactorization>(at::eye(csr.rows, at::kDouble), m, SolveStatus::Converged,
                                                         "umfpack", nullptr);
           }
         };
         return std::make_unique<Lying>(to_string(backend), &counters_);
       },
       [] { return std::vector<Backend>{Backend::Umfpack}; }});
  auto a = testing::random_matrix(5, 0.4, 3.0, false, 32);
  auto [x, info] = solve(a, at::ones({5}, at::kDouble));
  EXPECT_EQ(info.status, SolveStatus::Singular);
  EXPECT_GT(info.residual, 1.0);
}

TEST_F(DirectPath, BatchedValuesFactoriseEachOnce) {
  at::Tensor d = poisson2d(3).to_dense();
  auto a = SparseTensor::from_dense(at::stack({d, d + at::eye(9, at::kDouble)}));
  at::Tensor b = at::randn({2, 9}, at::kDouble);
  auto [x, info] = solve(a, b);
  EXPECT_EQ(counters_.factorize, 2);
  EXPECT_TRUE(at::allclose(x, at::linalg_solve(at::stack({d, d + at::eye(9, at::kDouble)}), b.unsqueeze(-1)).squeeze(-1)));
}

}  // namespace
}  // namespace tessera::sla
