// Sums in lanes (sla/kernels/lane_sums.h) and the CG loop's fused passes built on them
// (backends/native/cg_fused_kernels.h): every row is visited once, in order, and the sum is
// the lanes' sums added in their fixed order, bit for bit, whatever the range's length.

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "sla/backends/native/cg_fused_kernels.h"
#include "sla/kernels/lane_sums.h"

namespace tessera::sla::detail {
namespace {

std::vector<double> random_vector(int64_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = u(gen) * std::exp(8.0 * u(gen));   // magnitudes over ~7 decades: the order shows
  return v;
}

/// sum_l (sum_{i = begin + l mod kSumLanes} x_i), lanes added as lane_sums adds them.
double lanes_by_hand(const std::vector<double>& x, int64_t begin, int64_t end) {
  double lane[kSumLanes] = {};
  for (int64_t i = begin; i < end; ++i) lane[(i - begin) % kSumLanes] += x[static_cast<size_t>(i)];
  return (lane[0] + lane[1]) + (lane[2] + lane[3]);
}

TEST(LaneSums, EveryRowOnceInOrderAndTheLanesInTheirFixedOrder) {
  static_assert(kSumLanes == 4, "lanes_by_hand adds four lanes");
  const std::vector<double> x = random_vector(1000, 1);
  for (int64_t begin : {0, 3}) {
    for (int64_t len = 0; len <= 11; ++len) {
      std::vector<int64_t> seen;
      const std::array<double, 2> s = lane_sums<2>(begin, begin + len, [&](int64_t i) {
        seen.push_back(i);
        return std::array<double, 2>{x[static_cast<size_t>(i)], 2.0 * x[static_cast<size_t>(i)]};
      });
      ASSERT_EQ(static_cast<int64_t>(seen.size()), len);
      for (int64_t k = 0; k < len; ++k) EXPECT_EQ(seen[static_cast<size_t>(k)], begin + k);
      EXPECT_EQ(s[0], lanes_by_hand(x, begin, begin + len)) << "begin " << begin << " length " << len;
      EXPECT_EQ(s[1], 2.0 * lanes_by_hand(x, begin, begin + len));
    }
  }
  EXPECT_EQ(lane_sums<1>(5, 997, [&](int64_t i) { return std::array<double, 1>{x[static_cast<size_t>(i)]}; })[0],
            lanes_by_hand(x, 5, 997));
}

TEST(LaneSums, TheCgStepWritesItsVectorsAndReturnsBothInnerProducts) {
  const int64_t n = 3 * kMinPieceRows + 7;   // pieces of unequal length, a tail in every lane loop
  const std::vector<double> p = random_vector(n, 2), q = random_vector(n, 3), d0 = random_vector(n, 4);
  std::vector<double> x = random_vector(n, 5), r = random_vector(n, 6), z(static_cast<size_t>(n)), d(d0);
  for (double& di : d) di = 1.0 / (1.0 + std::abs(di));
  const std::vector<double> x0 = x, r0 = r;
  const double alpha = 0.37;
  const std::vector<int64_t> blocks{0, n / 3, n};
  const TwoSums s = cg_step_jacobi(blocks, x.data(), r.data(), z.data(), p.data(), q.data(), d.data(), alpha);
  long double rr = 0.0L, rz = 0.0L, rr_abs = 0.0L, rz_abs = 0.0L;
  for (int64_t i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    const double ri = r0[k] - alpha * q[k], zi = d[k] * ri;
    ASSERT_EQ(x[k], x0[k] + alpha * p[k]) << i;
    ASSERT_EQ(r[k], ri) << i;
    ASSERT_EQ(z[k], zi) << i;
    rr += static_cast<long double>(ri) * ri;
    rz += static_cast<long double>(ri) * zi;
    rr_abs += std::abs(static_cast<long double>(ri) * ri);
    rz_abs += std::abs(static_cast<long double>(ri) * zi);
  }
  // float64 summation: error below n eps sum |terms|
  EXPECT_LE(std::abs(static_cast<long double>(s.first) - rr), n * 1.2e-16L * rr_abs);
  EXPECT_LE(std::abs(static_cast<long double>(s.second) - rz), n * 1.2e-16L * rz_abs);
  EXPECT_EQ(blocked_dot(blocks, r.data(), z.data()), s.second) << "the same pieces and lanes, the same sum";
  const TwoSums two = blocked_dot2(blocks, r.data(), r.data(), z.data());
  EXPECT_EQ(two.first, s.first);
  EXPECT_EQ(two.second, s.second);
}

}  // namespace
}  // namespace tessera::sla::detail
