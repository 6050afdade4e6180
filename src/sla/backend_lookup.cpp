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

std::unique_ptr<DirectBackend> direct_backend(const std::string& name) {
  return current().make ? current().make(name) : make_direct_backend(name);
}

std::vector<std::string> direct_backends_compiled() {
  return current().compiled ? current().compiled() : compiled_direct_backends();
}

std::string preferred_direct_backend(Method method) {
  const std::vector<std::string> compiled = direct_backends_compiled();
  const std::vector<std::string> order = method == Method::LU ? std::vector<std::string>{"umfpack", "superlu", "eigen"}
                                                              : std::vector<std::string>{"cholmod", "eigen"};
  for (const std::string& name : order) {
    if (std::find(compiled.begin(), compiled.end(), name) == compiled.end()) continue;
    if (direct_backend(name)->supports(method)) return name;
  }
  return {};
}

}  // namespace tessera::sla::detail
