#pragma once
// How dispatch and BatchSolver find direct backends: make_direct_backend /
// compiled_direct_backends, unless a test installed its own lookup (e.g. a counting fake).

#include <functional>
#include <memory>
#include <vector>

#include "tessera/sla/backends/direct_backend.h"

namespace tessera::sla::detail {

struct BackendLookup {
  std::function<std::unique_ptr<DirectBackend>(Backend)> make;
  std::function<std::vector<Backend>()> compiled;
};

/// Installs `lookup` (both members set) or, with an empty one, restores the default.
void set_backend_lookup_for_testing(BackendLookup lookup);

std::unique_ptr<DirectBackend> direct_backend(Backend backend);
std::vector<Backend> direct_backends_compiled();

/// The preferred compiled backend providing `method`: CHOLMOD then Eigen for Cholesky and
/// LDLT, UMFPACK then SuperLU then Eigen for LU. Backend::Auto when none is compiled in.
Backend preferred_direct_backend(Method method);

}  // namespace tessera::sla::detail
