#include "tessera/core/version.h"

#include <torch/version.h>

namespace tessera::core {

std::string version() { return "0.1.0"; }

std::string torch_version() { return TORCH_VERSION; }

}  // namespace tessera::core
