// libFuzzer target: the MatrixMarket readers (sla::read_matrix_market,
// read_dense_matrix_market, and to_sparse on what was read). They take a path, so each
// input is written to a file of this process first. tessera::Error is the accepted answer
// to bad input; anything else is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/sla/matrix_market.h"

namespace {

const std::string& input_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/tessera_fuzz_mm_" + std::to_string(getpid()) + ".mtx";
  }();
  return path;
}

}  // namespace

// Sizes a file announces are checked against MemoryLedger::allocation_budget(); a 1 GiB
// cap keeps that budget below libFuzzer's -rss_limit_mb, so those checks are what is hit.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tessera::core::MemoryLedger::install();
  tessera::core::MemoryLedger::set_cap(int64_t{1} << 30);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = input_path();
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) std::abort();
    if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
  }
  try {
    auto mm = tessera::sla::read_matrix_market(path);
    auto a = mm.to_sparse();
    (void)a;
  } catch (const tessera::Error&) {
  }
  try {
    auto d = tessera::sla::read_dense_matrix_market(path);
    (void)d;
  } catch (const tessera::Error&) {
  }
  return 0;
}
