#pragma once
/// @file suitesparse_backends.h
/// SuiteSparse behind tessera's DirectBackend (internal; use make_direct_backend):
/// CHOLMOD (Cholesky, supernodal or simplicial as CHOLMOD chooses) and UMFPACK (LU).
/// Both use the int64 (SuiteSparse_long, `_l_` / `_dl_`) interfaces.

#include <memory>

#include "tessera/sla/backends/direct_backend.h"

namespace tessera::sla::backends {

std::unique_ptr<DirectBackend> make_cholmod_backend();
std::unique_ptr<DirectBackend> make_umfpack_backend();

}  // namespace tessera::sla::backends
