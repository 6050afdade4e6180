#pragma once
// Parallel loops over fixed row blocks: block t runs on thread t on every call (so its part
// of the vectors stays in that core's cache), and per-block sums are added in block order,
// so a reduction does not depend on scheduling.

#include <omp.h>

#include <cstdint>
#include <vector>

namespace tessera::sla::detail {

constexpr int kMaxBlockThreads = 64;

/// Two sums from one pass (e.g. <r, r> and <r, z>).
struct TwoSums {
  double first = 0.0, second = 0.0;
  TwoSums& operator+=(const TwoSums& o) {
    first += o.first;
    second += o.second;
    return *this;
  }
};

/// Runs body(begin, end) -> R on each block [blocks[t], blocks[t+1]) and returns the sum of
/// the results in block order. One thread per block (at most kMaxBlockThreads blocks).
template <typename R, typename Body>
R reduce_blocks(const std::vector<int64_t>& blocks, Body&& body) {
  const int nt = static_cast<int>(blocks.size()) - 1;
  if (nt == 1) return body(blocks[0], blocks[1]);
  R partial[kMaxBlockThreads];
#pragma omp parallel num_threads(nt)
  {
    const int team = omp_get_num_threads();
    for (int t = omp_get_thread_num(); t < nt; t += team) partial[t] = body(blocks[t], blocks[t + 1]);
  }
  R total{};
  for (int t = 0; t < nt; ++t) total += partial[t];
  return total;
}

}  // namespace tessera::sla::detail
