#pragma once
// Parallel loops over fixed row blocks. Block t is thread t's own: on an idle machine every
// thread runs its own block on every call (so its part of the vectors stays in that core's
// cache). Each block is cut into pieces that any thread may take, its owner first: on a busy
// machine, where another process has taken a thread's core for a few milliseconds, the
// threads still running take the pieces it has not started instead of waiting for it at the
// end of the loop (issue #27: CG beside one busy process). The pieces depend only on the
// blocks, and their sums are added in piece order, so a reduction does not depend on which
// thread ran which piece.

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

namespace tessera::sla::detail {

constexpr int kMaxBlockThreads = 64;
/// Pieces per block, at most; a block gets one piece per kMinPieceRows rows, at least one.
constexpr int kPiecesPerBlock = 8;
constexpr int64_t kMinPieceRows = 2048;

/// Two sums from one pass (e.g. <r, r> and <r, z>).
struct TwoSums {
  double first = 0.0, second = 0.0;
  TwoSums& operator+=(const TwoSums& o) {
    first += o.first;
    second += o.second;
    return *this;
  }
};

/// How many pieces block [begin, end) is cut into.
inline int block_pieces(int64_t begin, int64_t end) {
  return static_cast<int>(std::clamp<int64_t>((end - begin) / kMinPieceRows, 1, kPiecesPerBlock));
}

/// Piece k of n of block [begin, end): [begin + len k / n, begin + len (k + 1) / n).
inline int64_t piece_start(int64_t begin, int64_t end, int k, int n) { return begin + (end - begin) * k / n; }

/// Runs body(begin, end) -> R on every piece of every block [blocks[t], blocks[t+1]) and
/// returns the sum of the results in block and piece order. Thread t runs block t's pieces
/// first, then takes the pieces left of the other blocks (at most kMaxBlockThreads blocks).
/// `on_piece(thread, block)`, when given, is told who ran what (for the tests).
template <typename R, typename Body, typename OnPiece>
R reduce_blocks(const std::vector<int64_t>& blocks, Body&& body, OnPiece&& on_piece) {
  const int nt = static_cast<int>(blocks.size()) - 1;
  int pieces[kMaxBlockThreads];
  std::atomic<int> next[kMaxBlockThreads];   // next piece of block t to hand out
  for (int t = 0; t < nt; ++t) {
    pieces[t] = block_pieces(blocks[t], blocks[t + 1]);
    next[t].store(0, std::memory_order_relaxed);
  }
  R partial[kMaxBlockThreads * kPiecesPerBlock];
#pragma omp parallel num_threads(nt)
  {
    const int me = omp_get_thread_num();
    for (int s = 0; s < nt; ++s) {   // own block first, then the others in turn
      const int t = (me + s) % nt;
      for (int k = next[t].fetch_add(1, std::memory_order_relaxed); k < pieces[t];
           k = next[t].fetch_add(1, std::memory_order_relaxed)) {
        partial[t * kPiecesPerBlock + k] = body(piece_start(blocks[t], blocks[t + 1], k, pieces[t]),
                                                piece_start(blocks[t], blocks[t + 1], k + 1, pieces[t]));
        on_piece(me, t);
      }
    }
  }
  R total{};
  for (int t = 0; t < nt; ++t)
    for (int k = 0; k < pieces[t]; ++k) total += partial[t * kPiecesPerBlock + k];   // in piece order
  return total;
}

template <typename R, typename Body>
R reduce_blocks(const std::vector<int64_t>& blocks, Body&& body) {
  if (blocks.size() == 2) return body(blocks[0], blocks[1]);
  return reduce_blocks<R>(blocks, std::forward<Body>(body), [](int, int) {});
}

}  // namespace tessera::sla::detail
