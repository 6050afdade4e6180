#pragma once
// A SELL slice step's 8 columns (one per row of the slice) that run j0, j0 + 1, ..., j0 + 7,
// as a banded matrix's inner rows give (2D diffusion: every step of an inner slice): x_j is
// then two vector loads instead of eight scalar ones. For the AVX2 kernels, which run where
// avx2_fma_available() (the SELL kernels) or avx2_available() (the stencil rows, no FMA).

#include <cstdint>

#include "tessera/core/cpu_clones.h"

#ifdef TESSERA_CPU_CLONES_X86
#include <immintrin.h>

namespace tessera::sla::detail {

/// Whether this processor runs the AVX2 + FMA kernels (checked once).
inline bool avx2_fma_available() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}

/// Whether this processor runs the AVX2 kernels that use no FMA (checked once).
inline bool avx2_available() {
  static const bool ok = __builtin_cpu_supports("avx2");
  return ok;
}

/// cols[r] == cols[0] + r for r < 8
__attribute__((target("avx2,fma"))) inline bool columns_run8(const int32_t* cols) {
  const __m256i j = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cols));
  const __m256i run = _mm256_add_epi32(_mm256_set1_epi32(cols[0]), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  return _mm256_movemask_epi8(_mm256_cmpeq_epi32(j, run)) == -1;
}

}  // namespace tessera::sla::detail
#endif
