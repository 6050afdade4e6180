#pragma once
// Sums over a row range in interleaved partial sums ("lanes"). One running sum makes a
// reduction loop wait for each addition before the next (a floating-point add's latency,
// ~4 cycles, per row); kSumLanes independent sums let rows i, i+1, ... overlap. The lanes
// are added in a fixed order at the end, so a sum depends only on its range.

#include <array>
#include <cstdint>

namespace tessera::sla::detail {

constexpr int kSumLanes = 4;
static_assert(kSumLanes == 4, "lane_sums adds its lanes as (0 + 1) + (2 + 3)");

/// For every row i in [begin, end): runs term(i) -> std::array<double, K> (which may also
/// write row i's outputs) and returns the K sums of its terms:
/// sum_i term(i)_k = sum_l (sum_{i = begin + l mod kSumLanes} term(i)_k).
template <int K, typename Term>
std::array<double, K> lane_sums(int64_t begin, int64_t end, Term&& term) {
  double lane[kSumLanes][K] = {};
  int64_t i = begin;
  for (; i + kSumLanes <= end; i += kSumLanes) {
    for (int l = 0; l < kSumLanes; ++l) {
      const std::array<double, K> t = term(i + l);
      for (int k = 0; k < K; ++k) lane[l][k] += t[k];
    }
  }
  for (int l = 0; l < kSumLanes && i < end; ++i, ++l) {   // the tail: < kSumLanes rows
    const std::array<double, K> t = term(i);
    for (int k = 0; k < K; ++k) lane[l][k] += t[k];
  }
  std::array<double, K> sum{};
  for (int k = 0; k < K; ++k) sum[k] = (lane[0][k] + lane[1][k]) + (lane[2][k] + lane[3][k]);
  return sum;
}

}  // namespace tessera::sla::detail
