// UMFPACK through the shared conformance harness.
#include "sla/support/direct_conformance.h"

#if TESSERA_WITH_UMFPACK
namespace tessera::sla::testing {

TEST(Umfpack, LuConformance) { run_conformance("umfpack", Method::LU); }
TEST(Umfpack, LuReportsSingular) { run_singular_checks("umfpack", Method::LU); }

}  // namespace tessera::sla::testing
#endif
