// diffusion2d: assembly against a hand-built operator, symmetry, gradients in κ by finite
// differences; fit_conductivity: gradient check through solve and error reduction.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/core/error.h"
#include "tessera/sla/diffusion.h"
#include "tessera/sla/inverse_conductivity.h"
#include "tessera/sla/solve.h"

namespace tessera::sla {
namespace {

/// Dense reference: loop over cells and faces, T/h² per face, harmonic interior faces,
/// 2 κ_cell on boundary faces.
at::Tensor dense_reference(const at::Tensor& kappa) {
  const int64_t n = kappa.size(0);
  auto k = kappa.accessor<double, 2>();
  at::Tensor a = at::zeros({n * n, n * n}, at::kDouble);
  auto A = a.accessor<double, 2>();
  const double s = double(n) * double(n);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      const int64_t i = r * n + c;
      const int64_t dr[4] = {-1, 1, 0, 0}, dc[4] = {0, 0, -1, 1};
      for (int f = 0; f < 4; ++f) {
        const int64_t rr = r + dr[f], cc = c + dc[f];
        if (rr < 0 || rr >= n || cc < 0 || cc >= n) { A[i][i] += 2 * k[r][c] * s; continue; }
        const double t = 2 * k[r][c] * k[rr][cc] / (k[r][c] + k[rr][cc]);
        A[i][i] += t * s;
        A[i][rr * n + cc] -= t * s;
      }
    }
  }
  return a;
}

TEST(Diffusion2d, MatchesHandBuiltOperator) {
  at::manual_seed(3);
  at::Tensor kappa = 0.5 + at::rand({5, 5}, at::kDouble);
  SparseTensor a = diffusion2d(kappa);
  EXPECT_TRUE(at::allclose(a.to_dense(), dense_reference(kappa), 1e-13, 1e-12));
  EXPECT_TRUE(detect_properties(a).spd_candidate());
}

TEST(Diffusion2d, BatchedFieldsGiveBatchedValues) {
  at::Tensor kappa = 1 + at::rand({3, 4, 4}, at::kDouble);
  SparseTensor a = diffusion2d(kappa);
  ASSERT_EQ(a.batch_size(), 3);
  EXPECT_TRUE(at::allclose(a.values()[1], diffusion2d(kappa[1]).values(), 0, 0));
}

TEST(Diffusion2d, RejectsNonSquareField) {
  EXPECT_THROW(diffusion2d(at::ones({3, 4}, at::kDouble)), tessera::InvalidInput);
  EXPECT_THROW(diffusion2d(at::ones({4}, at::kDouble)), tessera::InvalidInput);
}

TEST(Diffusion2d, SolveGradientInKappaMatchesFiniteDifferences) {
  // J(κ) = wᵀ A(κ)^{-1} f, dJ/dκ through the assembly and one adjoint solve
  at::manual_seed(5);
  const int64_t n = 6;
  at::Tensor kappa = (0.5 + at::rand({n, n}, at::kDouble)).requires_grad_();
  at::Tensor f = at::randn({n * n}, at::kDouble), w = at::randn({n * n}, at::kDouble);
  auto J = [&](const at::Tensor& k) { return at::dot(w, solve(diffusion2d(k), f).first); };
  J(kappa).backward();
  const double h = 1e-6;
  for (int64_t idx : {0, 7, 14, 35}) {
    at::Tensor plus = kappa.detach().clone(), minus = kappa.detach().clone();
    plus.view(-1)[idx] += h;
    minus.view(-1)[idx] -= h;
    const double fd = (J(plus).item<double>() - J(minus).item<double>()) / (2 * h);
    const double ad = kappa.grad().view(-1)[idx].item<double>();
    EXPECT_NEAR(ad, fd, 1e-6 * std::max(1.0, std::abs(fd))) << "cell " << idx;
  }
}

TEST(FitConductivity, ReducesKappaErrorOnASmallGrid) {
  InverseConductivityOptions options;
  options.grid = 16;
  options.basis = 8;
  options.max_steps = 150;
  double first_error = -1;
  auto first = [&](const InverseConductivityStep& s) { if (s.step == 0) first_error = s.kappa_error; };
  InverseConductivityResult r = fit_conductivity(options, first);
  ASSERT_NE(r.stop_reason, "solve_failed");
  EXPECT_GT(first_error, 0.1);              // κ ≡ 1 is ~24% off κ*
  EXPECT_LT(r.last.kappa_error, 0.02);      // recovered to a few percent in 150 steps
  EXPECT_LT(r.last.misfit, 1e-5);
}

TEST(FitConductivity, RejectsBadOptions) {
  InverseConductivityOptions options;
  options.grid = 1;
  EXPECT_THROW(fit_conductivity(options), tessera::InvalidInput);
  options.grid = 8;
  options.basis = 9;
  EXPECT_THROW(fit_conductivity(options), tessera::InvalidInput);
}

}  // namespace
}  // namespace tessera::sla
