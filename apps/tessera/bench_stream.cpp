// STREAM triad and medians for the sla benchmarks (see bench_stream.h).

#include "bench_stream.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <fstream>
#include <memory>

namespace tessera::app {

double stream_triad_gbs(int64_t elements, int repeats) {
  std::unique_ptr<double[]> a(new double[elements]), b(new double[elements]), c(new double[elements]);
  const int threads = at::get_num_threads();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < elements; ++i) {   // first touch by the thread that will use the page
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
  const double s = 3.0;
  double best = 0.0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < elements; ++i) a[i] = b[i] + s * c[i];   // triad
    const double t = seconds_since(t0);
    best = std::max(best, 24.0 * static_cast<double>(elements) / t / 1e9);
  }
  volatile double sink = a[elements / 2];   // keep the stores
  (void)sink;
  return best;
}

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples.empty() ? 0.0 : samples[samples.size() / 2];
}

double load_average() {
  std::ifstream f("/proc/loadavg");
  double one = 0;
  f >> one;
  return one;
}

}  // namespace tessera::app
