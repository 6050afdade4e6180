// SuperLU through the shared conformance harness.
#include "sla/support/direct_conformance.h"

#if TESSERA_WITH_SUPERLU
namespace tessera::sla::testing {

TEST(Superlu, LuConformance) { run_conformance("superlu", Method::LU); }
TEST(Superlu, LuReportsSingular) { run_singular_checks("superlu", Method::LU); }

}  // namespace tessera::sla::testing
#endif
