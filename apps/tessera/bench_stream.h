#pragma once
// Helpers shared by the sla benchmarks: the STREAM triad bandwidth measured inside the
// benchmark program, medians, timers and the load average.

#include <chrono>
#include <cstdint>
#include <vector>

namespace tessera::app {

/// STREAM triad a = b + s c over three float64 arrays of `elements` each (sized well
/// beyond the last-level cache), OpenMP static over the current thread count; the best
/// of `repeats` passes in GB/s counting 24 bytes per element (STREAM's convention).
double stream_triad_gbs(int64_t elements = int64_t{1} << 26, int repeats = 8);

/// Median of the samples (the upper middle one for an even count).
double median(std::vector<double> samples);

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// One-minute load average (/proc/loadavg), recorded beside timings.
double load_average();

}  // namespace tessera::app
