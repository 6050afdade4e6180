// Reference point of `tessera bench spmv`: the textbook OpenMP CSR product (int32 indices,
// `omp parallel for schedule(static)` over rows) and a STREAM triad, in one small program with
// no library in between, on the same 2D Poisson matrix. Tells what fraction of the triad a
// plain CSR kernel reaches on this machine.
//
//   build/bench_plain_csr_spmv [n=4000] [products=20]      (n^2 rows; OMP_NUM_THREADS threads)
//
// Prints one JSON line; bandwidth counts 12 bytes per nonzero + 16 per row, as `bench spmv`.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Median seconds per call of `f` over 5 batches of `k` calls.
template <typename F>
double median_seconds(int k, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < k; ++i) f();
    t.push_back(seconds_since(t0) / k);
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 4000;
  const int products = argc > 2 ? std::atoi(argv[2]) : 20;
  const long rows = n * n;
  std::vector<int> rp(rows + 1), ci;
  std::vector<double> v;
  ci.reserve(5 * rows);
  v.reserve(5 * rows);
  for (long i = 0; i < rows; ++i) {   // 5-point Laplacian, columns ascending
    rp[i] = static_cast<int>(ci.size());
    const long r = i / n, c = i % n;
    if (r > 0) { ci.push_back(static_cast<int>(i - n)); v.push_back(-1.0); }
    if (c > 0) { ci.push_back(static_cast<int>(i - 1)); v.push_back(-1.0); }
    ci.push_back(static_cast<int>(i)); v.push_back(4.0);
    if (c < n - 1) { ci.push_back(static_cast<int>(i + 1)); v.push_back(-1.0); }
    if (r < n - 1) { ci.push_back(static_cast<int>(i + n)); v.push_back(-1.0); }
  }
  rp[rows] = static_cast<int>(ci.size());
  std::vector<double> x(rows, 1.0), y(rows), a(rows), b(rows, 1.0), c(rows, 2.0);
  auto spmv = [&] {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < rows; ++i) {
      double s = 0.0;
      for (int p = rp[i]; p < rp[i + 1]; ++p) s += v[p] * x[ci[p]];   // y_i = sum_j a_ij x_j
      y[i] = s;
    }
  };
  auto triad = [&] {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < rows; ++i) a[i] = b[i] + 3.0 * c[i];         // a = b + s c
  };
  spmv();
  triad();
  const double t_spmv = median_seconds(products, spmv);
  const double t_triad = median_seconds(products, triad);
  const double bytes = 12.0 * static_cast<double>(ci.size()) + 16.0 * static_cast<double>(rows);
  const double spmv_gbs = bytes / t_spmv / 1e9, triad_gbs = 24.0 * static_cast<double>(rows) / t_triad / 1e9;
  std::printf("{\"bench\": \"peer\", \"solver\": \"plain-openmp-csr-spmv\", \"rows\": %ld, \"nnz\": %zu, "
              "\"threads\": %d, \"seconds_per_spmv_median\": %.6g, \"bandwidth_gbs\": %.4g, \"stream_gbs\": %.4g, "
              "\"fraction_of_stream\": %.4g}\n",
              rows, ci.size(), omp_get_max_threads(), t_spmv, spmv_gbs, triad_gbs, spmv_gbs / triad_gbs);
  return 0;
}
