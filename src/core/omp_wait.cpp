#include "tessera/core/omp_wait.h"

#include <cstdlib>
#include <string>

namespace tessera::core {

std::string omp_wait_description() {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  const char* marker = std::getenv(TESSERA_OMP_WAIT_MARKER);
  std::string out;
  if (policy != nullptr) out += std::string("OMP_WAIT_POLICY=") + policy;
  if (spin != nullptr) out += std::string(out.empty() ? "" : ", ") + "GOMP_SPINCOUNT=" + spin;
  if (out.empty()) return "libgomp default (300000 spins)";
  bool ours = marker != nullptr && spin == nullptr && policy != nullptr &&
              std::string(policy) == TESSERA_BUSY_OMP_WAIT_POLICY;
  return out + (ours ? " (tessera: the machine was busy at start)" : " (environment)");
}

}  // namespace tessera::core
