// The one place that maps Backend values to implementations. Explicit calls, not static
// self-registration: static libraries drop objects nobody references.
#include <string>
#include <vector>

#include "sla/backends/native/native_backend.h"
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

bool is_direct(Backend b) {
  return b == Backend::Eigen || b == Backend::Cholmod || b == Backend::Umfpack || b == Backend::Superlu;
}

bool is_iterative(Backend b) { return b == Backend::Native || b == Backend::Eigen; }

std::string join(const std::vector<Backend>& backends) {
  std::string out;
  for (Backend b : backends) out += (out.empty() ? "" : ", ") + std::string(to_string(b));
  return out.empty() ? "none" : out;
}

}  // namespace

std::unique_ptr<DirectBackend> make_direct_backend(Backend backend) {
  TESSERA_CHECK(is_direct(backend), InvalidInput, "'", to_string(backend),
                "' is not a direct backend; expected one of eigen, cholmod, umfpack, superlu");
  switch (backend) {
#if TESSERA_WITH_EIGEN
    case Backend::Eigen: return backends::make_eigen_direct_backend();
#endif
#if TESSERA_WITH_CHOLMOD
    case Backend::Cholmod: return backends::make_cholmod_backend();
#endif
#if TESSERA_WITH_UMFPACK
    case Backend::Umfpack: return backends::make_umfpack_backend();
#endif
#if TESSERA_WITH_SUPERLU
    case Backend::Superlu: return backends::make_superlu_backend();
#endif
    default: break;
  }
  TESSERA_THROW(NotCompiled, "direct backend '", to_string(backend),
                "' is not compiled into this build; compiled: ", join(compiled_direct_backends()));
}

std::unique_ptr<DirectBackend> make_direct_backend(const std::string& name) {
  return make_direct_backend(parse_backend(name));
}

std::vector<Backend> compiled_direct_backends() {
  std::vector<Backend> backends;
#if TESSERA_WITH_EIGEN
  backends.push_back(Backend::Eigen);
#endif
#if TESSERA_WITH_CHOLMOD
  backends.push_back(Backend::Cholmod);
#endif
#if TESSERA_WITH_UMFPACK
  backends.push_back(Backend::Umfpack);
#endif
#if TESSERA_WITH_SUPERLU
  backends.push_back(Backend::Superlu);
#endif
  return backends;
}

std::unique_ptr<IterativeBackend> make_iterative_backend(Backend backend) {
  TESSERA_CHECK(is_iterative(backend), InvalidInput, "'", to_string(backend),
                "' is not an iterative backend; expected native or eigen");
  switch (backend) {
    case Backend::Native: return backends::make_native_backend();
#if TESSERA_WITH_EIGEN
    case Backend::Eigen: return backends::make_eigen_iterative_backend();
#endif
    default: break;
  }
  TESSERA_THROW(NotCompiled, "iterative backend '", to_string(backend),
                "' is not compiled into this build; compiled: ", join(compiled_iterative_backends()));
}

std::unique_ptr<IterativeBackend> make_iterative_backend(const std::string& name) {
  return make_iterative_backend(parse_backend(name));
}

std::vector<Backend> compiled_iterative_backends() {
  std::vector<Backend> backends{Backend::Native};
#if TESSERA_WITH_EIGEN
  backends.push_back(Backend::Eigen);
#endif
  return backends;
}

}  // namespace tessera::sla
