// libFuzzer target: the VNN-LIB parser (lirpa::parse_vnnlib). Any tessera::Error is an
// accepted answer to bad input; every other exception, crash or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/core/error.h"
#include "tessera/lirpa/vnnlib.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    tessera::lirpa::Property p = tessera::lirpa::parse_vnnlib(text, "<fuzz>");
    (void)p;
  } catch (const tessera::Error&) {
  }
  return 0;
}
