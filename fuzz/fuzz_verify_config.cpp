// libFuzzer target: the YAML configuration of `tessera verify` (lirpa::parse_verify_config).
// tessera::Error is the accepted answer to bad input; anything else (a YAML exception that
// escapes, a crash) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/core/error.h"
#include "tessera/lirpa/verify_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto o = tessera::lirpa::parse_verify_config(text, "<fuzz>");
    (void)o;
  } catch (const tessera::Error&) {
  }
  return 0;
}
