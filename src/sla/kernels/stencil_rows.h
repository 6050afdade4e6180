#pragma once
// Rows of y = A x for a matrix in stencil form (StencilForm: constant diagonals and a mask of
// the diagonals each row stores), with <x, y> when asked. Row by row, as lane_sums adds; and on
// AVX2 four rows at a time where all four store every diagonal (a grid's inner points): the
// same products, sums and lanes, so the result is the same bit for bit either way (a row-by-row
// loop with a branch on the mask does not vectorise: ~5 cycles a row, 0.4 of the memory's
// bandwidth on 2D Poisson).

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "sla/kernels/column_runs.h"
#include "sla/kernels/lane_sums.h"
#include "sla/kernels/spmv.h"

namespace tessera::sla::detail {

constexpr int kMaxStencilDiagonals = 8;

/// A stencil form's diagonals as plain arrays (ND > 0: a count known when compiled).
template <int ND, typename vec_t>
struct StencilTaps {
  int nd = 0;
  vec_t c[kMaxStencilDiagonals];
  int64_t off[kMaxStencilDiagonals];
  const uint8_t* mask = nullptr;
  explicit StencilTaps(const StencilForm& s) : nd(ND > 0 ? ND : static_cast<int>(s.offsets.size())), mask(s.mask.data_ptr<uint8_t>()) {
    for (int d = 0; d < nd; ++d) {
      c[d] = static_cast<vec_t>(s.coeffs[d]);
      off[d] = s.offsets[d];
    }
  }
  unsigned full() const { return (1u << nd) - 1u; }
  /// y_i = sum_d c_d x_{i + o_d} over the diagonals row i stores (in the order of d)
  vec_t row(const vec_t* x, int64_t i) const {
    const unsigned m = mask[i];
    vec_t acc = 0;
    if (m == full()) {
      for (int d = 0; d < nd; ++d) acc += c[d] * x[i + off[d]];
    } else {
      for (int d = 0; d < nd; ++d) {
        if (m >> d & 1u) acc += c[d] * x[i + off[d]];
      }
    }
    return acc;
  }
};

/// Rows [r0, r1) of y = A x, one at a time; returns sum_i x_i y_i when kDot.
template <int ND, bool kDot, typename vec_t>
double stencil_rows_scalar(const StencilTaps<ND, vec_t>& t, const vec_t* x, vec_t* y, int64_t r0, int64_t r1) {
  return lane_sums<1>(r0, r1, [&](int64_t i) {
    const vec_t acc = t.row(x, i);
    y[i] = acc;
    return std::array<double, 1>{kDot ? static_cast<double>(acc) * x[i] : 0.0};   // <x, y>
  })[0];
}

#ifdef TESSERA_CPU_CLONES_X86
/// The same on AVX2 for float64: rows r0 + 4k .. r0 + 4k + 3 are lane_sums' lanes 0..3, one
/// vector; a group whose four masks are all full is four rows at once (multiply, then add, as
/// the scalar rows: no fused multiply-add), any other group row by row into the vector.
template <int ND, bool kDot>
__attribute__((target("avx2"))) double stencil_rows_avx2(const StencilTaps<ND, double>& t, const double* x,
                                                         double* y, int64_t r0, int64_t r1) {
  static_assert(kSumLanes == 4, "one AVX2 vector of float64 is the four lanes");
  const uint32_t full4 = t.full() * 0x01010101u;
  __m256d lanes = _mm256_setzero_pd();
  int64_t i = r0;
  for (; i + 4 <= r1; i += 4) {
    uint32_t m4;
    std::memcpy(&m4, t.mask + i, 4);
    __m256d acc;
    if (m4 == full4) {
      acc = _mm256_setzero_pd();
      for (int d = 0; d < t.nd; ++d)
        acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_set1_pd(t.c[d]), _mm256_loadu_pd(x + i + t.off[d])));   // sum_d c_d x_{i + o_d}
    } else {
      acc = _mm256_setr_pd(t.row(x, i), t.row(x, i + 1), t.row(x, i + 2), t.row(x, i + 3));
    }
    _mm256_storeu_pd(y + i, acc);
    if constexpr (kDot) lanes = _mm256_add_pd(lanes, _mm256_mul_pd(acc, _mm256_loadu_pd(x + i)));   // lanes += y_i x_i
  }
  alignas(32) double lane[kSumLanes];
  _mm256_store_pd(lane, lanes);
  for (int l = 0; i < r1; ++i, ++l) {   // the tail: < 4 rows, lanes 0, 1, 2 as in lane_sums
    const double acc = t.row(x, i);
    y[i] = acc;
    if constexpr (kDot) lane[l] += acc * x[i];
  }
  return (lane[0] + lane[1]) + (lane[2] + lane[3]);
}
#endif

/// Rows [r0, r1) of y = A x in stencil form with ND diagonals (ND = 0: any number); returns
/// sum_i x_i y_i when kDot.
template <int ND, bool kDot, typename vec_t>
double stencil_rows(const StencilTaps<ND, vec_t>& t, const vec_t* x, vec_t* y, int64_t r0, int64_t r1) {
#ifdef TESSERA_CPU_CLONES_X86
  if constexpr (std::is_same_v<vec_t, double>) {
    if (avx2_available()) return stencil_rows_avx2<ND, kDot>(t, x, y, r0, r1);
  }
#endif
  return stencil_rows_scalar<ND, kDot>(t, x, y, r0, r1);
}

}  // namespace tessera::sla::detail
