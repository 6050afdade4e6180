// TEMPORARY — DELETE AT MERGE. Weak stand-ins for the backend factories so that the `sla`
// branch links before the direct/iterative backends branch is merged. The real (strong)
// definitions live in the other helper's files and replace these at link time only when
// their object is linked; the lead deletes this file when merging.

#include "tessera/core/error.h"
#include "tessera/sla/backends/direct_backend.h"
#include "tessera/sla/backends/iterative_backend.h"

namespace tessera::sla {

__attribute__((weak)) std::unique_ptr<DirectBackend> make_direct_backend(const std::string& name) {
  TESSERA_THROW(NotCompiled, "direct backend '", name, "' is not compiled into this build");
}

__attribute__((weak)) std::vector<std::string> compiled_direct_backends() { return {}; }

__attribute__((weak)) std::unique_ptr<IterativeBackend> make_iterative_backend(const std::string& name) {
  TESSERA_THROW(NotCompiled, "iterative backend '", name, "' is not compiled into this build");
}

}  // namespace tessera::sla
