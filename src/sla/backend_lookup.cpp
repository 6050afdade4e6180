// The direct-backend lookup used by dispatch, replaceable in tests.

#include "sla/backend_lookup.h"

#include <algorithm>

namespace tessera::sla::detail {
namespace {

BackendLookup& current() {
  static BackendLookup lookup;
  return lookup;
}

}  // namespace

void set_backend_lookup_for_testing(BackendLookup lookup) { current() = std::move(lookup); }

std::unique_ptr<DirectBackend> direct_backend(Backend backend) {
  return current().make ? current().make(backend) : make_direct_backend(backend);
}

std::vector<Backend> direct_backends_compiled() {
  return current().compiled ? current().compiled() : compiled_direct_backends();
}

Backend preferred_direct_backend(Method method) {
  const std::vector<Backend> compiled = direct_backends_compiled();
  const std::vector<Backend> order = method == Method::LU
                                         ? std::vector<Backend>{Backend::Umfpack, Backend::Superlu, Backend::Eigen}
                                         : std::vector<Backend>{Backend::Cholmod, Backend::Eigen};
  for (Backend backend : order) {
    if (std::find(compiled.begin(), compiled.end(), backend) == compiled.end()) continue;
    if (direct_backend(backend)->supports(method)) return backend;
  }
  return Backend::Auto;
}

}  // namespace tessera::sla::detail
