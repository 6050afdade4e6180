#include <gtest/gtest.h>
#include <string>
#include <thread>
#include <vector>

#include <ATen/ATen.h>

#include "tessera/core/error.h"
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

// Tensors made and freed on several threads at once (as LibTorch's intra-op threads do): the
// ledger's size table and counters stay exact. `make sanitize` runs it under ThreadSanitizer.
TEST_F(MemoryLedgerTest, AllocationsFromSeveralThreadsAreCountedExactly) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 500;
  const int64_t before = MemoryLedger::current_bytes();
  const int64_t count_before = MemoryLedger::allocation_count();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < kRounds; ++i) {
        at::Tensor block = at::empty({1024 + i}, at::kByte);  // made and freed here
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(MemoryLedger::current_bytes(), before);
  EXPECT_GE(MemoryLedger::allocation_count() - count_before, kThreads * kRounds);
}

TEST_F(MemoryLedgerTest, InstallIsIdempotent) {
  MemoryLedger::install();
  EXPECT_TRUE(MemoryLedger::installed());
  const int64_t n = MemoryLedger::allocation_count();
  at::Tensor t = at::empty({10}, at::kFloat);
  EXPECT_EQ(MemoryLedger::allocation_count(), n + 1);  // counted once, not by two wrappers
}

TEST_F(MemoryLedgerTest, CapRefusesAnAllocationAboveItWithATypedError) {
  const int64_t held = MemoryLedger::current_bytes();
  MemoryLedger::set_cap(held + 4 * kMiB);
  EXPECT_EQ(MemoryLedger::cap(), held + 4 * kMiB);
  try {
    at::Tensor big = at::empty({8 * kMiB}, at::kByte);
    MemoryLedger::set_cap(0);
    FAIL() << "an 8 MiB tensor under a 4 MiB cap was allocated";
  } catch (const ResourceExhausted& e) {
    MemoryLedger::set_cap(0);
    const std::string message = e.what();
    EXPECT_NE(message.find("memory cap of " + std::to_string(held + 4 * kMiB) + " bytes"),
              std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(8 * kMiB) + " more requested"), std::string::npos) << message;
    EXPECT_NE(message.find("bytes held"), std::string::npos) << message;
  }
  EXPECT_EQ(MemoryLedger::current_bytes(), held);  // the refused request left nothing behind
}

TEST_F(MemoryLedgerTest, AllocationsUnderTheCapAndAfterItsResetSucceed) {
  const int64_t held = MemoryLedger::current_bytes();
  MemoryLedger::set_cap(held + 16 * kMiB);
  {
    at::Tensor a = at::ones({1024, 1024}, at::kDouble);  // 8 MiB: fits
    EXPECT_EQ(a.sum().item<double>(), 1024.0 * 1024.0);
    EXPECT_THROW(at::empty({9 * kMiB}, at::kByte), ResourceExhausted);  // 8 + 9 > 16
  }
  // An ATen op whose intermediate exceeds the cap throws the same error out of the op.
  at::Tensor x = at::ones({1024, 1024}, at::kFloat);                 // 4 MiB
  EXPECT_THROW(at::matmul(x, x).repeat({4, 1}), ResourceExhausted);  // 16 MiB result
  MemoryLedger::set_cap(0);  // reset: no cap
  EXPECT_EQ(MemoryLedger::cap(), 0);
  at::Tensor big = at::empty({32 * kMiB}, at::kByte);
  EXPECT_GE(MemoryLedger::current_bytes(), held + 32 * kMiB);
}

TEST(ParseByteSize, SuffixesArePowersOf1024AndBadTextIsAnInputError) {
  EXPECT_EQ(parse_byte_size("123"), 123);
  EXPECT_EQ(parse_byte_size("500K"), 500 * 1024);
  EXPECT_EQ(parse_byte_size("500M"), 500 * kMiB);
  EXPECT_EQ(parse_byte_size("500m"), 500 * kMiB);
  EXPECT_EQ(parse_byte_size("500MB"), 500 * kMiB);
  EXPECT_EQ(parse_byte_size("500MiB"), 500 * kMiB);
  EXPECT_EQ(parse_byte_size("2G"), 2 * 1024 * kMiB);
  EXPECT_EQ(parse_byte_size("1T"), int64_t{1} << 40);
  for (const char* bad : {"", "M", "-5M", "1.5G", "5X", "5 M", "5MM"}) {
    EXPECT_THROW(parse_byte_size(bad), InvalidInput) << bad;
  }
  EXPECT_THROW(MemoryLedger::set_cap(-1), InvalidInput);
}

}  // namespace
}  // namespace tessera::core
