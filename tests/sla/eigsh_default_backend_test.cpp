// eigsh's default backend: which engine Auto runs, and that its eigenpairs and gradients are
// those of the native block Lanczos.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "sla/eigsh/lanczos.h"
#include "tessera/sla/eigsh.h"
#include "tessera/sla/generators.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

using testing::random_matrix;

EigshOptions options(EigshBackend backend, Which which, int64_t k) {
  EigshOptions o;
  o.backend = backend;
  o.which = which;
  o.k = k;
  o.sigma = 0.1;
  o.tol = 1e-12;
  return o;
}

TEST(EigshDefaultBackend, AutoRunsLanczosAtTheEndsAndNativeForShiftInvertAndSmallN) {
  const std::string ends = "lanczos";
  SparseTensor a = poisson2d(12);   // n = 144 > ncv + block = 20 + 3
  for (Which which : {Which::Largest, Which::Smallest}) {
    EXPECT_EQ(eigsh(a, options(EigshBackend::Auto, which, 4)).info.backend, ends) << to_string(which);
  }
  if (!compiled_direct_backends().empty()) {
    EXPECT_EQ(eigsh(a, options(EigshBackend::Auto, Which::Nearest, 4)).info.backend, "native");
  }
  SparseTensor small = poisson2d(4);   // n = 16: the Krylov space covers it, dense eigh
  EXPECT_EQ(eigsh(small, options(EigshBackend::Auto, Which::Largest, 2)).info.backend, "native (dense)");
}

TEST(EigshDefaultBackend, AutoGivesTheNativeEigenpairsAndGradients) {
  SparseTensor a = random_matrix(120, 0.05, 0.0, /*symmetric=*/true, 11);   // simple eigenvalues
  at::manual_seed(3);
  at::Tensor w = at::randn({120, 3}, at::kDouble);
  for (Which which : {Which::Largest, Which::Smallest}) {
    at::Tensor grads[2];
    at::Tensor lambdas[2];
    at::Tensor vectors[2];
    int i = 0;
    for (EigshBackend backend : {EigshBackend::Auto, EigshBackend::Native}) {
      at::Tensor v = a.values().clone().requires_grad_();
      EigshResult r = eigsh(a.with_values(v), options(backend, which, 3));
      ASSERT_EQ(r.info.status, SolveStatus::Converged) << r.info.message;
      EXPECT_LT(r.info.max_residual, 1e-8);
      // L = sum_i λ_i + sum_ij w_ij V_ij: both the eigenvalue and the eigenvector gradient
      (r.eigenvalues.sum() + (r.eigenvectors * w).sum()).backward();
      lambdas[i] = r.eigenvalues.detach();
      vectors[i] = r.eigenvectors.detach();
      grads[i++] = v.grad();
    }
    EXPECT_LT((lambdas[0] - lambdas[1]).abs().max().item<double>(), 1e-8) << to_string(which);
    EXPECT_LT((vectors[0] - vectors[1]).abs().max().item<double>(), 1e-8) << to_string(which);
    EXPECT_LT((grads[0] - grads[1]).abs().max().item<double>(), 1e-8) << to_string(which);
  }
}

}  // namespace
}  // namespace tessera::sla
