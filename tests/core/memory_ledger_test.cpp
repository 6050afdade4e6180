#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "tessera/core/memory_ledger.h"

namespace tessera::core {
namespace {

constexpr int64_t kMiB = 1 << 20;

class MemoryLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override { MemoryLedger::install(); }
};

TEST_F(MemoryLedgerTest, PeakRisesByAllocationAndCurrentFallsBack) {
  const int64_t before = MemoryLedger::current_bytes();
  MemoryLedger::reset_peak();
  {
    at::Tensor a = at::empty({8 * kMiB / 8}, at::kDouble);   // 8 MiB
    at::Tensor b = at::empty({4 * kMiB / 4}, at::kFloat);    // 4 MiB
    EXPECT_GE(MemoryLedger::current_bytes() - before, 12 * kMiB);
    EXPECT_GE(MemoryLedger::peak_bytes() - before, 12 * kMiB);
  }
  EXPECT_EQ(MemoryLedger::current_bytes(), before);
  EXPECT_GE(MemoryLedger::peak_bytes() - before, 12 * kMiB);
  MemoryLedger::reset_peak();
  EXPECT_EQ(MemoryLedger::peak_bytes(), before);
}

TEST_F(MemoryLedgerTest, CountsIntermediatesOfAtenOps) {
  at::Tensor x = at::ones({1024, 1024}, at::kDouble);  // 8 MiB
  MemoryPhase phase("matmul");
  { at::Tensor y = at::matmul(x, x) + 1.0; }  // at least one 8 MiB result alive at once
  PhaseRecord r = phase.finish();
  EXPECT_EQ(r.name, "matmul");
  EXPECT_GE(r.peak_increase(), 8 * kMiB);
  EXPECT_EQ(r.end_bytes, r.baseline_bytes);
}

TEST_F(MemoryLedgerTest, PhaseBaselineAndNestedPeaks) {
  at::Tensor held = at::empty({2 * kMiB}, at::kByte);
  MemoryPhase outer("outer");
  EXPECT_GE(outer.baseline_bytes(), 2 * kMiB);
  { at::Tensor big = at::empty({16 * kMiB}, at::kByte); }
  {
    MemoryPhase inner("inner");
    { at::Tensor small = at::empty({1 * kMiB}, at::kByte); }
    PhaseRecord ri = inner.finish();
    EXPECT_GE(ri.peak_increase(), 1 * kMiB);
    EXPECT_LT(ri.peak_increase(), 16 * kMiB);  // the inner phase did not see the big block
  }
  PhaseRecord ro = outer.finish();
  EXPECT_GE(ro.peak_increase(), 16 * kMiB);  // the inner phase did not erase the outer peak
}

TEST_F(MemoryLedgerTest, InstallIsIdempotent) {
  MemoryLedger::install();
  EXPECT_TRUE(MemoryLedger::installed());
  const int64_t n = MemoryLedger::allocation_count();
  at::Tensor t = at::empty({10}, at::kFloat);
  EXPECT_EQ(MemoryLedger::allocation_count(), n + 1);  // counted once, not by two wrappers
}

}  // namespace
}  // namespace tessera::core
