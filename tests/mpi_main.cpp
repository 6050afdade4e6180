// main() for the multi-process GoogleTest suites: runs every test on every rank, prints
// from rank 0 only, and fails the job when any rank failed.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "tessera/core/threads.h"
#include "tessera/dist/communicator.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto comm = tessera::dist::world();
  tessera::core::setup_threads(1);
  if (comm->rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int local = RUN_ALL_TESTS();
  // failed = max over ranks of each rank's result
  at::Tensor failed = at::full({1}, static_cast<int64_t>(local != 0), at::kLong);
  comm->all_reduce(failed, tessera::dist::ReduceOp::Max);
  const bool any_failed = failed.item<int64_t>() != 0;
  if (local != 0) std::fprintf(stderr, "rank %d of %d: tests failed\n", comm->rank(), comm->size());
  if (comm->rank() == 0) {
    std::printf("mpi suite on %d ranks: %s\n", comm->size(), any_failed ? "FAILED" : "passed");
  }
  tessera::dist::finalize();
  return any_failed ? 1 : 0;
}
