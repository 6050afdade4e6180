// main() of the single-process GoogleTest suites: two threads unless TESSERA_THREADS says
// otherwise (ctest cannot pass two environment variables through gtest_discover_tests).

#include <gtest/gtest.h>

#include <cstdlib>

#include "tessera/core/threads.h"

int main(int argc, char** argv) {
  setenv("TESSERA_THREADS", "2", /*overwrite=*/0);
  ::testing::InitGoogleTest(&argc, argv);
  tessera::core::setup_threads(0);
  return RUN_ALL_TESTS();
}
