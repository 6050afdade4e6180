// The parallel loop over row blocks (sla/kernels/row_blocks.h) under a thread that does not
// run: as on a machine where another process has taken one of the two cores, the running
// thread takes the held thread's pieces, and the sum does not depend on who ran what.

#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "sla/kernels/row_blocks.h"

namespace tessera::sla::detail {
namespace {

/// Two blocks of 8 pieces each; x_i = 1 / (i + 1), so that the order of the sums shows.
struct TwoBlocks {
  static constexpr int64_t kRows = 2 * kPiecesPerBlock * kMinPieceRows;
  std::vector<int64_t> blocks{0, kRows / 2, kRows};
  std::vector<double> x;
  TwoBlocks() : x(kRows) {
    for (int64_t i = 0; i < kRows; ++i) x[i] = 1.0 / static_cast<double>(i + 1);
  }
  double piece_sum(int64_t a, int64_t b) const {
    double s = 0.0;
    for (int64_t i = a; i < b; ++i) s += x[i];   // s = sum_{a <= i < b} x_i
    return s;
  }
  /// The sum in block and piece order, on one thread.
  double serial() const {
    double total = 0.0;
    for (size_t t = 0; t + 1 < blocks.size(); ++t) {
      const int n = block_pieces(blocks[t], blocks[t + 1]);
      for (int k = 0; k < n; ++k)
        total += piece_sum(piece_start(blocks[t], blocks[t + 1], k, n), piece_start(blocks[t], blocks[t + 1], k + 1, n));
    }
    return total;
  }
};

TEST(RowBlocks, TheRunningThreadTakesThePiecesOfAThreadThatDoesNotRun) {
  TwoBlocks data;
  ASSERT_EQ(block_pieces(data.blocks[0], data.blocks[1]), kPiecesPerBlock);
  const int total_pieces = 2 * kPiecesPerBlock;
  std::atomic<int> done{0}, team{0};
  std::atomic<bool> one_started{false};
  std::atomic<int> ran[2][2] = {};   // ran[thread][block]: pieces thread ran of block
  // Deadlines guard against a hang; they are not measurements.
  const auto wait_until = [](auto&& ready) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!ready() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  const auto body = [&](int64_t a, int64_t b) {
    team = omp_get_num_threads();
    if (team.load() < 2) {
    } else if (omp_get_thread_num() == 0) {
      wait_until([&] { return one_started.load(); });   // thread 1 has its first piece
    } else if (!one_started.exchange(true)) {
      wait_until([&] { return done.load() == total_pieces - 1; });   // held until all others are done
    }
    const double s = data.piece_sum(a, b);
    ++done;
    return s;
  };
  const double sum = reduce_blocks<double>(data.blocks, body, [&](int thread, int block) { ++ran[thread][block]; });
  if (team.load() < 2) GTEST_SKIP() << "OpenMP gave one thread";
  EXPECT_EQ(ran[1][1].load(), 1) << "the held thread ran only the piece it was held in";
  EXPECT_EQ(ran[0][1].load(), kPiecesPerBlock - 1) << "thread 0 took the held thread's other pieces";
  EXPECT_EQ(ran[0][0].load(), kPiecesPerBlock);
  EXPECT_EQ(sum, data.serial()) << "the same sum, bit for bit, as in block and piece order";
}

TEST(RowBlocks, SumsDoNotDependOnWhoRanWhichPiece) {
  TwoBlocks data;
  const double expected = data.serial();
  for (int run = 0; run < 20; ++run) {
    const double sum =
        reduce_blocks<double>(data.blocks, [&](int64_t a, int64_t b) { return data.piece_sum(a, b); });
    EXPECT_EQ(sum, expected) << "run " << run;
  }
  // One block is run whole, as before: no pieces.
  const std::vector<int64_t> one{0, TwoBlocks::kRows};
  EXPECT_EQ(reduce_blocks<double>(one, [&](int64_t a, int64_t b) { return data.piece_sum(a, b); }),
            data.piece_sum(0, TwoBlocks::kRows));
}

TEST(RowBlocks, ShortBlocksAreOnePieceAndPiecesCoverTheBlock) {
  EXPECT_EQ(block_pieces(0, 10), 1);
  EXPECT_EQ(block_pieces(0, 3 * kMinPieceRows), 3);
  EXPECT_EQ(block_pieces(5, 5 + 100 * kMinPieceRows), kPiecesPerBlock);
  for (int n : {1, 3, 8}) {
    EXPECT_EQ(piece_start(7, 1007, 0, n), 7);
    EXPECT_EQ(piece_start(7, 1007, n, n), 1007);
    for (int k = 0; k < n; ++k) EXPECT_LE(piece_start(7, 1007, k, n), piece_start(7, 1007, k + 1, n));
  }
}

}  // namespace
}  // namespace tessera::sla::detail
