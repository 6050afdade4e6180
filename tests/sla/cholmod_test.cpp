// CHOLMOD through the shared conformance harness.
#include "sla/support/direct_conformance.h"

#if TESSERA_WITH_CHOLMOD
namespace tessera::sla::testing {

TEST(Cholmod, CholeskyConformance) { run_conformance("cholmod", Method::Cholesky); }
TEST(Cholmod, CholeskyReportsIndefinite) { run_indefinite_checks("cholmod"); }
TEST(Cholmod, OnlyCholesky) {
  auto backend = make_direct_backend("cholmod");
  EXPECT_FALSE(backend->supports(Method::LU));
  EXPECT_THROW(backend->factorize(poisson2d(3), Method::LU), tessera::Unsupported);
}

}  // namespace tessera::sla::testing
#endif
