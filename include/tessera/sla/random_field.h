#pragma once
/// @file random_field.h
/// A reproducible random field indexed by (seed, global index): each value is a pure
/// function of the two, so any rank or any slice of a grid computes its own part and gets
/// the same numbers as a serial run. Counter-based: the SplitMix64 output at position
/// 2i (and 2i + 1) of the stream seeded by `seed` gives two uniforms in (0, 1), and
/// Box-Muller turns them into one standard normal z_i.
///
/// @code
///   double z = tessera::sla::standard_normal(7, 12345);          // z_12345 of seed 7
///   at::Tensor k = tessera::sla::lognormal_field(7, 1.0, 0, 100);   // exp(1.0 * z_i), i in [0, 100)
/// @endcode

#include <ATen/core/Tensor.h>

#include <cmath>
#include <cstdint>

namespace tessera::sla {

/// u_i uniform in (0, 1), a deterministic function of (seed, index) (the first of the two
/// uniforms that standard_normal(seed, index) uses).
double uniform(uint64_t seed, uint64_t index);

/// z_i ~ N(0, 1), a deterministic function of (seed, index).
double standard_normal(uint64_t seed, uint64_t index);

/// κ_i = exp(sigma * z_i): log-normal with median 1 (sigma = 0 gives κ ≡ 1 exactly).
inline double lognormal(uint64_t seed, uint64_t index, double sigma) {
  return sigma == 0.0 ? 1.0 : std::exp(sigma * standard_normal(seed, index));
}

/// κ_i = exp(sigma * z_i) for i in [begin, begin + count), float64 [count].
at::Tensor lognormal_field(uint64_t seed, double sigma, int64_t begin, int64_t count);

}  // namespace tessera::sla
