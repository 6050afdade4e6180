// The MatrixMarket fuzz corpus (fuzz/corpus/matrix_market, fuzz/regressions/matrix_market)
// through the normal build's readers: every file either reads or throws a typed tessera::Error.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tessera/core/error.h"
#include "tessera/sla/matrix_market.h"

namespace tessera::sla {
namespace {

namespace fs = std::filesystem;

TEST(MatrixMarketFuzz, CorpusGivesTypedErrorsOnly) {
  int n = 0;
  for (const char* dir : {"corpus", "regressions"}) {
    const fs::path d = fs::path(TESSERA_SOURCE_DIR) / "fuzz" / dir / "matrix_market";
    if (!fs::is_directory(d)) continue;
    for (const auto& e : fs::directory_iterator(d)) {
      if (!e.is_regular_file()) continue;
      ++n;
      const std::string path = e.path().string();
      try {
        read_matrix_market(path).to_sparse();
      } catch (const Error&) {
      } catch (const std::exception& ex) {
        ADD_FAILURE() << path << ": untyped exception: " << ex.what();
      }
      try {
        read_dense_matrix_market(path);
      } catch (const Error&) {
      } catch (const std::exception& ex) {
        ADD_FAILURE() << path << ": untyped exception: " << ex.what();
      }
    }
  }
  EXPECT_GE(n, 4);
}

}  // namespace
}  // namespace tessera::sla
