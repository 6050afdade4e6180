// Counter-based normal and log-normal fields: see random_field.h.

#include "tessera/sla/random_field.h"

#include <ATen/ATen.h>

#include <cmath>

#include "tessera/core/error.h"

namespace tessera::sla {
namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;   // 2^64 / φ, SplitMix64's increment

/// SplitMix64's output function: a bijective 64-bit mix.
uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// The c-th output of the SplitMix64 stream whose state starts at mix64(seed):
/// state_c = state_0 + (c + 1) φ, output = mix64(state_c).
uint64_t stream_bits(uint64_t seed, uint64_t c) { return mix64(mix64(seed) + (c + 1) * kGolden); }

/// A uniform in the open interval (0, 1) from the top 53 bits.
double open_uniform(uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53; }

}  // namespace

double uniform(uint64_t seed, uint64_t index) { return open_uniform(stream_bits(seed, 2 * index)); }

double standard_normal(uint64_t seed, uint64_t index) {
  const double u1 = open_uniform(stream_bits(seed, 2 * index));
  const double u2 = open_uniform(stream_bits(seed, 2 * index + 1));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);   // Box-Muller: z = √(-2 ln u1) cos(2π u2)
}

at::Tensor lognormal_field(uint64_t seed, double sigma, int64_t begin, int64_t count) {
  TESSERA_CHECK(begin >= 0 && count >= 0, InvalidInput, "lognormal_field: begin and count must be >= 0, got ", begin,
                " and ", count);
  at::Tensor out = at::empty({count}, at::kDouble);
  double* k = out.data_ptr<double>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; ++i) k[i] = lognormal(seed, static_cast<uint64_t>(begin + i), sigma);
  return out;
}

}  // namespace tessera::sla
