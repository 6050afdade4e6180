// libFuzzer target: the ONNX loader (lirpa::load_onnx_bytes). tessera::Error is the
// accepted answer to bad input; anything else (a c10::Error, a crash) is a bug. Only the
// loader's own files are instrumented; the bound operators it builds come from the normal
// (uninstrumented) build of the library.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/lirpa/model_io.h"

// Sizes a file announces are checked against MemoryLedger::allocation_budget(); a 1 GiB
// cap keeps that budget below libFuzzer's -rss_limit_mb, so those checks are what is hit.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tessera::core::MemoryLedger::install();
  tessera::core::MemoryLedger::set_cap(int64_t{1} << 30);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    auto g = tessera::lirpa::load_onnx_bytes(bytes, "<fuzz>");
    (void)g;
  } catch (const tessera::Error&) {
  }
  return 0;
}
