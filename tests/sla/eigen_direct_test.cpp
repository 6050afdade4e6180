// Eigen's direct solvers through the shared conformance harness.
#include "sla/support/direct_conformance.h"

#if TESSERA_WITH_EIGEN
namespace tessera::sla::testing {

TEST(EigenDirect, CholeskyConformance) { run_conformance("eigen", Method::Cholesky); }
TEST(EigenDirect, LdltConformance) { run_conformance("eigen", Method::LDLT); }
TEST(EigenDirect, LuConformance) { run_conformance("eigen", Method::LU); }
TEST(EigenDirect, CholeskyReportsIndefinite) { run_indefinite_checks("eigen"); }
TEST(EigenDirect, LuReportsSingular) { run_singular_checks("eigen", Method::LU); }
TEST(EigenDirect, LdltReportsSingular) { run_singular_checks("eigen", Method::LDLT); }

}  // namespace tessera::sla::testing
#endif
