#pragma once
/// @file version.h
/// tessera's version and the versions of what it was built against.

#include <string>

namespace tessera::core {

/// "0.1.0"
std::string version();
/// LibTorch version tessera was compiled against, e.g. "1.13.0".
std::string torch_version();

}  // namespace tessera::core
