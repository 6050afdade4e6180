// Hager's 1-norm estimate of ||A^{-1}||_1 against the exact value from a dense inverse.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstring>

#include "sla/backends/common/condition.h"
#include "sla/support/test_matrices.h"

namespace tessera::sla::testing {
namespace {

using backends::detail::InPlaceSolve;

// x <- A^{-1} x (or A^{-T} x) with a dense inverse.
InPlaceSolve dense_solve(const at::Tensor& inverse) {
  return [inverse](double* x, bool transpose) {
    const int64_t n = inverse.size(0);
    at::Tensor v = at::from_blob(x, {n}, at::kDouble).clone();
    at::Tensor y = at::matmul(transpose ? inverse.t() : inverse, v).contiguous();
    std::memcpy(x, y.data_ptr<double>(), sizeof(double) * n);
  };
}

TEST(ConditionEstimate, WithinFactorThreeOfExactInverseNorm) {
  at::manual_seed(3);
  for (int64_t n : {1, 2, 10, 80}) {
    for (int trial = 0; trial < 3; ++trial) {
      at::Tensor a = at::randn({n, n}, at::kDouble) + 0.5 * at::eye(n, at::kDouble);
      at::Tensor inverse = at::inverse(a);
      const double exact = inverse.abs().sum(0).max().item<double>();  // ||A^{-1}||_1
      const double estimate = backends::detail::estimate_inverse_norm1(n, dense_solve(inverse));
      EXPECT_LE(estimate, exact * (1 + 1e-12)) << "n = " << n;  // a lower bound
      EXPECT_GE(estimate, exact / 3.0) << "n = " << n;
    }
  }
}

TEST(ConditionEstimate, NonFiniteSolveMeansSingular) {
  const InPlaceSolve broken = [](double* x, bool) { x[0] = std::numeric_limits<double>::infinity(); };
  EXPECT_TRUE(std::isinf(backends::detail::estimate_inverse_norm1(4, broken)));
  CsrMatrix a = poisson2d(2);
  std::string message;
  EXPECT_EQ(backends::detail::status_from_rcond(a, broken, "test", message), SolveStatus::Singular);
  EXPECT_NE(message.find("singular to working precision"), std::string::npos);
}

}  // namespace
}  // namespace tessera::sla::testing
