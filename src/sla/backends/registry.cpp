// The one place that maps backend names to implementations. Explicit calls, not static
// self-registration: static libraries drop objects nobody references.
#include <string>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/sla/backends/direct_backend.h"
#include "tessera/sla/backends/iterative_backend.h"

#if TESSERA_WITH_EIGEN
#include "sla/backends/eigen/eigen_backends.h"
#endif
#if TESSERA_WITH_CHOLMOD || TESSERA_WITH_UMFPACK
#include "sla/backends/suitesparse/suitesparse_backends.h"
#endif
#if TESSERA_WITH_SUPERLU
#include "sla/backends/superlu/superlu_backend.h"
#endif

namespace tessera::sla {
namespace {

const std::vector<std::string> kDirectNames = {"eigen", "cholmod", "umfpack", "superlu"};
const std::vector<std::string> kIterativeNames = {"eigen"};

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  for (const auto& n : names) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace

std::unique_ptr<DirectBackend> make_direct_backend(const std::string& name) {
  TESSERA_CHECK(contains(kDirectNames, name), InvalidInput, "unknown direct backend '", name,
                "'; expected one of ", join(kDirectNames));
#if TESSERA_WITH_EIGEN
  if (name == "eigen") return backends::make_eigen_direct_backend();
#endif
#if TESSERA_WITH_CHOLMOD
  if (name == "cholmod") return backends::make_cholmod_backend();
#endif
#if TESSERA_WITH_UMFPACK
  if (name == "umfpack") return backends::make_umfpack_backend();
#endif
#if TESSERA_WITH_SUPERLU
  if (name == "superlu") return backends::make_superlu_backend();
#endif
  TESSERA_THROW(NotCompiled, "direct backend '", name,
                "' is not compiled into this build; compiled: ", join(compiled_direct_backends()));
}

std::vector<std::string> compiled_direct_backends() {
  std::vector<std::string> names;
#if TESSERA_WITH_EIGEN
  names.push_back("eigen");
#endif
#if TESSERA_WITH_CHOLMOD
  names.push_back("cholmod");
#endif
#if TESSERA_WITH_UMFPACK
  names.push_back("umfpack");
#endif
#if TESSERA_WITH_SUPERLU
  names.push_back("superlu");
#endif
  return names;
}

std::unique_ptr<IterativeBackend> make_iterative_backend(const std::string& name) {
  TESSERA_CHECK(contains(kIterativeNames, name), InvalidInput, "unknown iterative backend '", name,
                "'; expected one of ", join(kIterativeNames),
                " (tessera's own Krylov solvers are the backend \"native\" of solve())");
#if TESSERA_WITH_EIGEN
  if (name == "eigen") return backends::make_eigen_iterative_backend();
#endif
  TESSERA_THROW(NotCompiled, "iterative backend '", name, "' is not compiled into this build");
}

}  // namespace tessera::sla
