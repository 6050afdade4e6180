// Every iterative backend through the shared conformance harness.
#include "sla/support/iterative_conformance.h"

namespace tessera::sla::testing {
namespace {

TEST(IterativeConformance, Native) {
  // 4 methods x the preconditioners of one process on SPD, symmetric indefinite, nonsymmetric
  EXPECT_GE(run_iterative_conformance(Backend::Native), 40);
}

#if TESSERA_WITH_EIGEN
TEST(IterativeConformance, Eigen) {
  // CG and BiCGStab x none, Jacobi
  EXPECT_GE(run_iterative_conformance(Backend::Eigen), 10);
}
#endif

TEST(IterativeConformance, EveryCompiledBackendHasAnEntryHere) {
  for (Backend b : compiled_iterative_backends()) {
    EXPECT_TRUE(b == Backend::Native || b == Backend::Eigen) << "add a TEST for " << to_string(b);
  }
}

}  // namespace
}  // namespace tessera::sla::testing
