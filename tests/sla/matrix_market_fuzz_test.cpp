// The MatrixMarket fuzz corpus (fuzz/corpus/matrix_market, fuzz/regressions/matrix_market)
// and seeded mutations of it (tests/fuzz_smoke.h) through the normal build's readers: every
// file either reads or throws a typed tessera::Error.

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "fuzz_smoke.h"
#include "tessera/core/error.h"
#include "tessera/sla/matrix_market.h"

namespace tessera::sla {
namespace {

TEST(MatrixMarketFuzz, CorpusAndMutationsGiveTypedErrorsOnly) {
  // the readers take a path: each input is written to this file first
  const std::string path = ::testing::TempDir() + "tessera_mm_smoke_" + std::to_string(getpid()) + ".mtx";
  const int n = test::fuzz_smoke("matrix_market", 50, [&](const std::string& bytes, const std::string& name) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    try {
      read_matrix_market(path).to_sparse();
    } catch (const Error&) {
    } catch (const std::exception& ex) {
      ADD_FAILURE() << name << ": untyped exception: " << ex.what();
    }
    try {
      read_dense_matrix_market(path);
    } catch (const Error&) {
    } catch (const std::exception& ex) {
      ADD_FAILURE() << name << ": untyped exception: " << ex.what();
    }
  });
  std::remove(path.c_str());
  EXPECT_GE(n, 5000);
}

}  // namespace
}  // namespace tessera::sla
