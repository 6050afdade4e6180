// Lanczos basis kernels (see basis_kernels.h). The row loops are compiled twice on x86-64
// (AVX2 + FMA and the baseline) and the loader picks the one the processor runs.

#include "sla/eigsh/basis_kernels.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace tessera::sla::detail {
namespace {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TESSERA_ROW_KERNEL __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define TESSERA_ROW_KERNEL
#endif

/// Below this many multiply-adds a kernel runs on one thread: waking the team costs more.
constexpr int64_t kParallelWork = 1 << 18;
constexpr int kMaxThreads = 64;
constexpr int64_t kColumnsPerPass = 4;

/// h[c] = sum_{i in [r0, r1)} V(i, c) w_i for c < j, four columns per pass over w.
TESSERA_ROW_KERNEL void inner_rows(const double* v, int64_t n, int64_t j, const double* w, double* h, int64_t r0,
                                   int64_t r1) {
  int64_t c = 0;
  for (; c + kColumnsPerPass <= j; c += kColumnsPerPass) {
    const double *v0 = v + c * n, *v1 = v0 + n, *v2 = v1 + n, *v3 = v2 + n;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (int64_t i = r0; i < r1; ++i) {
      s0 += v0[i] * w[i];
      s1 += v1[i] * w[i];
      s2 += v2[i] * w[i];
      s3 += v3[i] * w[i];
    }
    h[c] = s0, h[c + 1] = s1, h[c + 2] = s2, h[c + 3] = s3;
  }
  for (; c < j; ++c) {
    const double* vc = v + c * n;
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = r0; i < r1; ++i) s += vc[i] * w[i];
    h[c] = s;
  }
}

/// w_i -= sum_c V(i, c) h_c for i in [r0, r1), four columns per pass over w.
TESSERA_ROW_KERNEL void subtract_rows(const double* v, int64_t n, int64_t j, const double* h, double* w, int64_t r0,
                                      int64_t r1) {
  int64_t c = 0;
  for (; c + kColumnsPerPass <= j; c += kColumnsPerPass) {
    const double *v0 = v + c * n, *v1 = v0 + n, *v2 = v1 + n, *v3 = v2 + n;
    const double h0 = h[c], h1 = h[c + 1], h2 = h[c + 2], h3 = h[c + 3];
#pragma omp simd
    for (int64_t i = r0; i < r1; ++i) w[i] -= v0[i] * h0 + v1[i] * h1 + v2[i] * h2 + v3[i] * h3;
  }
  for (; c < j; ++c) {
    const double* vc = v + c * n;
    const double hc = h[c];
#pragma omp simd
    for (int64_t i = r0; i < r1; ++i) w[i] -= vc[i] * hc;
  }
}

/// U(i, q) = sum_c V(i, c) Y(c, q) for i in [r0, r1): rows in chunks that stay in L1.
TESSERA_ROW_KERNEL void combine_rows(const double* v, int64_t n, int64_t j, const double* y, int64_t ldy, int64_t p,
                                     double* u, int64_t r0, int64_t r1) {
  constexpr int64_t kChunk = 512;
  for (int64_t a = r0; a < r1; a += kChunk) {
    const int64_t b = std::min(r1, a + kChunk);
    for (int64_t q = 0; q < p; ++q) {
      double* uq = u + q * n;
      for (int64_t i = a; i < b; ++i) uq[i] = 0.0;
      for (int64_t c = 0; c < j; ++c) {
        const double* vc = v + c * n;
        const double ycq = y[c * ldy + q];
#pragma omp simd
        for (int64_t i = a; i < b; ++i) uq[i] += vc[i] * ycq;
      }
    }
  }
}

TESSERA_ROW_KERNEL double dot_rows(const double* w, int64_t r0, int64_t r1) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = r0; i < r1; ++i) s += w[i] * w[i];
  return s;
}

TESSERA_ROW_KERNEL double axpy_dot_rows(double* w, const double* x, double a, const double* y, int64_t r0,
                                        int64_t r1) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = r0; i < r1; ++i) {
    w[i] -= a * x[i];
    s += y[i] * w[i];
  }
  return s;
}

int threads_for(int64_t work) {
  return work < kParallelWork ? 1 : std::min(omp_get_max_threads(), kMaxThreads);
}

int64_t block_start(int64_t n, int t, int nt) { return n * t / nt; }

}  // namespace

void basis_inner(const double* v, int64_t n, int64_t j, const double* w, double* h) {
  const int nt = threads_for(n * j);
  if (nt == 1) {
    inner_rows(v, n, j, w, h, 0, n);
    return;
  }
  double partial[kMaxThreads][64];
  const int64_t cols = std::min<int64_t>(j, 64);
  for (int64_t c0 = 0; c0 < j; c0 += cols) {   // at most 64 columns per round of partial sums
    const int64_t jc = std::min(cols, j - c0);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int t = 0; t < nt; ++t) inner_rows(v + c0 * n, n, jc, w, partial[t], block_start(n, t, nt), block_start(n, t + 1, nt));
    for (int64_t c = 0; c < jc; ++c) {
      double s = 0;
      for (int t = 0; t < nt; ++t) s += partial[t][c];   // block order
      h[c0 + c] = s;
    }
  }
}

void basis_subtract(const double* v, int64_t n, int64_t j, const double* h, double* w) {
  const int nt = threads_for(n * j);
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (nt > 1)
  for (int t = 0; t < nt; ++t) subtract_rows(v, n, j, h, w, block_start(n, t, nt), block_start(n, t + 1, nt));
}

void basis_combine(const double* v, int64_t n, int64_t j, const double* y, int64_t ldy, int64_t p, double* u) {
  const int nt = threads_for(n * j * p);
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (nt > 1)
  for (int t = 0; t < nt; ++t) combine_rows(v, n, j, y, ldy, p, u, block_start(n, t, nt), block_start(n, t + 1, nt));
}

double vector_norm(const double* w, int64_t n) {
  const int nt = threads_for(n);
  if (nt == 1) return std::sqrt(dot_rows(w, 0, n));
  double partial[kMaxThreads];
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) partial[t] = dot_rows(w, block_start(n, t, nt), block_start(n, t + 1, nt));
  double s = 0;
  for (int t = 0; t < nt; ++t) s += partial[t];
  return std::sqrt(s);
}

double axpy_dot(double* w, const double* x, double a, const double* y, int64_t n) {
  const int nt = threads_for(n);
  if (nt == 1) return axpy_dot_rows(w, x, a, y, 0, n);
  double partial[kMaxThreads];
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) partial[t] = axpy_dot_rows(w, x, a, y, block_start(n, t, nt), block_start(n, t + 1, nt));
  double s = 0;
  for (int t = 0; t < nt; ++t) s += partial[t];
  return s;
}

double axpy_norm(double* w, const double* x, double a, int64_t n) { return std::sqrt(axpy_dot(w, x, a, w, n)); }

void vector_scale(double* w, int64_t n, double s) {
  const int nt = threads_for(n);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
  for (int64_t i = 0; i < n; ++i) w[i] *= s;
}

}  // namespace tessera::sla::detail
