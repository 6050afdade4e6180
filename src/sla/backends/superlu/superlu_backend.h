#pragma once
/// @file superlu_backend.h
/// SuperLU (sequential, dgstrf/dgstrs) behind tessera's DirectBackend (internal; use
/// make_direct_backend("superlu")). LU with partial pivoting and COLAMD column ordering;
/// int32 indices inside SuperLU, so n and nnz must stay below 2^31.

#include <memory>

#include "tessera/sla/backends/direct_backend.h"

namespace tessera::sla::backends {

std::unique_ptr<DirectBackend> make_superlu_backend();

}  // namespace tessera::sla::backends
