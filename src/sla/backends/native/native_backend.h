#pragma once
// tessera's own Krylov solvers behind the IterativeBackend interface (Backend::Native;
// internal, use make_iterative_backend(Backend::Native)).

#include <memory>

#include "tessera/sla/backends/iterative_backend.h"

namespace tessera::sla::backends {

std::unique_ptr<IterativeBackend> make_native_backend();

}  // namespace tessera::sla::backends
