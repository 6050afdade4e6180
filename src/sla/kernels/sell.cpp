// SELL-C-σ build and product (see sell.h). The slice loop is compiled for AVX-512, for
// AVX2 + FMA and for the baseline; the loader picks the one the processor runs.

#include "sla/kernels/sell.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sla/kernels/column_runs.h"
#include "tessera/core/cpu_clones.h"
#include "tessera/core/error.h"

#ifdef TESSERA_CPU_CLONES_X86
#include <immintrin.h>
#endif

namespace tessera::sla::detail {
namespace {

template <typename index_t>
SellForm build_typed(const index_t* rp, const index_t* ci, const double* v, int64_t rows, int chunk, int64_t sigma) {
  SellForm f;
  f.chunk = chunk;
  f.sigma = (sigma + chunk - 1) / chunk * chunk;
  f.rows = rows;
  f.nnz = static_cast<int64_t>(rp[rows]);
  const int64_t slices = (rows + chunk - 1) / chunk;
  std::vector<int32_t> order(static_cast<size_t>(slices) * chunk, -1);
  std::iota(order.begin(), order.begin() + rows, 0);
  auto length = [&](int32_t i) { return i < 0 ? int64_t{0} : static_cast<int64_t>(rp[i + 1] - rp[i]); };
  for (int64_t w0 = 0; !f.in_order() && w0 < rows; w0 += f.sigma) {   // sort each σ window, longest first
    const int64_t w1 = std::min(rows, w0 + f.sigma);
    std::stable_sort(order.begin() + w0, order.begin() + w1,
                     [&](int32_t a, int32_t b) { return length(a) > length(b); });
  }
  f.slice_ptr.assign(static_cast<size_t>(slices) + 1, 0);
  for (int64_t s = 0; s < slices; ++s) {
    int64_t width = 0;
    for (int r = 0; r < chunk; ++r) width = std::max(width, length(order[s * chunk + r]));
    f.slice_ptr[s + 1] = f.slice_ptr[s] + width * chunk;
  }
  f.values = at::empty({f.stored()}, at::kDouble);
  f.cols = at::empty({f.stored()}, at::kInt);
  double* fv = f.values.data_ptr<double>();
  int32_t* fc = f.cols.data_ptr<int32_t>();
#pragma omp parallel for schedule(static)
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t width = (f.slice_ptr[s + 1] - f.slice_ptr[s]) / chunk;
    for (int r = 0; r < chunk; ++r) {
      const int32_t i = order[s * chunk + r];
      const int64_t len = length(i), start = i < 0 ? 0 : static_cast<int64_t>(rp[i]);
      const int32_t pad_col = len > 0 ? static_cast<int32_t>(ci[start + len - 1]) : 0;   // a column already read
      for (int64_t k = 0; k < width; ++k) {
        const int64_t at = f.slice_ptr[s] + k * chunk + r;
        fv[at] = k < len ? v[start + k] : 0.0;
        fc[at] = k < len ? static_cast<int32_t>(ci[start + k]) : pad_col;
      }
    }
  }
  f.row_of = std::move(order);
  return f;
}

/// y(row_of[s C + r]) = sum_k values[s, k, r] x[cols[s, k, r]] for slices [s0, s1).
template <int C>
inline __attribute__((always_inline)) double slices_fixed(const int64_t* sp, const int32_t* row_of, const double* v, const int32_t* c,
                                        const double* x, double* y, int64_t s0, int64_t s1, bool dot) {
  double total = 0.0;
  for (int64_t s = s0; s < s1; ++s) {
    double acc[C] = {};
    for (int64_t p = sp[s]; p < sp[s + 1]; p += C) {
#pragma omp simd
      for (int r = 0; r < C; ++r) acc[r] += v[p + r] * x[c[p + r]];   // y_i += a_ij x_j, C rows at once
    }
    const int32_t* rows = row_of + s * C;
    for (int r = 0; r < C; ++r) {
      if (rows[r] < 0) continue;   // padding row of the last slice
      y[rows[r]] = acc[r];
      if (dot) total += acc[r] * x[rows[r]];
    }
  }
  return total;
}

/// The same for rows in order (σ <= C): slice s is rows [s C, s C + C).
template <int C>
inline __attribute__((always_inline)) double in_order_fixed(const int64_t* sp, const double* v, const int32_t* c,
                                                            const double* x, double* y, int64_t rows, int64_t s0,
                                                            int64_t s1, bool dot) {
  double total = 0.0;
  for (int64_t s = s0; s < s1; ++s) {
    double acc[C] = {};
    for (int64_t p = sp[s]; p < sp[s + 1]; p += C) {
#pragma omp simd
      for (int r = 0; r < C; ++r) acc[r] += v[p + r] * x[c[p + r]];
    }
    const int64_t i0 = s * C, n = std::min<int64_t>(C, rows - i0);
    for (int r = 0; r < n; ++r) {
      y[i0 + r] = acc[r];
      if (dot) total += acc[r] * x[i0 + r];
    }
  }
  return total;
}

#ifdef TESSERA_CPU_CLONES_X86
/// Rows in order, C = 8, AVX2: each full slice's 8 results go to y by two streaming stores
/// (one whole 64-byte line when y is 64-byte aligned; the caller checks).
__attribute__((target("avx2,fma"))) double in_order8_stream(const int64_t* sp, const double* v, const int32_t* c,
                                                            const double* x, double* y, int64_t rows, int64_t s0,
                                                            int64_t s1, bool dot) {
  double total = 0.0;
  for (int64_t s = s0; s < s1; ++s) {
    __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
    for (int64_t p = sp[s]; p < sp[s + 1]; p += 8) {
      // x_j: two vector loads when the 8 columns run j0 .. j0 + 7, else scalar loads of the
      // column and the value (no gather: slower on the AMD cores measured); the same values
      const bool run = columns_run8(c + p);
      const __m256d x_lo = run ? _mm256_loadu_pd(x + c[p]) : _mm256_set_pd(x[c[p + 3]], x[c[p + 2]], x[c[p + 1]], x[c[p]]);
      const __m256d x_hi = run ? _mm256_loadu_pd(x + c[p] + 4)
                               : _mm256_set_pd(x[c[p + 7]], x[c[p + 6]], x[c[p + 5]], x[c[p + 4]]);
      // y_i += a_ij x_j, rows 0-3 and 4-7: written as the portable kernels' multiply and add, so
      // the compiler contracts both alike and y does not depend on which kernel ran
      lo = _mm256_add_pd(lo, _mm256_mul_pd(_mm256_loadu_pd(v + p), x_lo));
      hi = _mm256_add_pd(hi, _mm256_mul_pd(_mm256_loadu_pd(v + p + 4), x_hi));
    }
    const int64_t i0 = s * 8;
    if (i0 + 8 <= rows) {
      _mm256_stream_pd(y + i0, lo);
      _mm256_stream_pd(y + i0 + 4, hi);
    } else {
      alignas(32) double acc[8];
      _mm256_store_pd(acc, lo);
      _mm256_store_pd(acc + 4, hi);
      for (int64_t i = i0; i < rows; ++i) y[i] = acc[i - i0];
    }
    if (dot && i0 + 8 <= rows) {   // sum_i y_i x_i over the slice's 8 rows
      const __m256d d = _mm256_add_pd(_mm256_mul_pd(lo, _mm256_loadu_pd(x + i0)), _mm256_mul_pd(hi, _mm256_loadu_pd(x + i0 + 4)));
      alignas(32) double part[4];
      _mm256_store_pd(part, d);
      total += (part[0] + part[1]) + (part[2] + part[3]);
    } else if (dot) {   // the last slice, partial: no load past x's last row
      for (int64_t i = i0; i < rows; ++i) total += y[i] * x[i];
    }
  }
  _mm_sfence();   // the streamed lines are visible before another thread reads y
  return total;
}
#endif

TESSERA_CPU_CLONES double in_order4(const int64_t* sp, const double* v, const int32_t* c, const double* x, double* y,
                                     int64_t rows, int64_t s0, int64_t s1, bool dot) {
  return in_order_fixed<4>(sp, v, c, x, y, rows, s0, s1, dot);
}

TESSERA_CPU_CLONES double in_order8(const int64_t* sp, const double* v, const int32_t* c, const double* x, double* y,
                                     int64_t rows, int64_t s0, int64_t s1, bool dot) {
  return in_order_fixed<8>(sp, v, c, x, y, rows, s0, s1, dot);
}

TESSERA_CPU_CLONES double slices4(const int64_t* sp, const int32_t* row_of, const double* v, const int32_t* c,
                                   const double* x, double* y, int64_t s0, int64_t s1, bool dot) {
  return slices_fixed<4>(sp, row_of, v, c, x, y, s0, s1, dot);
}

TESSERA_CPU_CLONES double slices8(const int64_t* sp, const int32_t* row_of, const double* v, const int32_t* c,
                                   const double* x, double* y, int64_t s0, int64_t s1, bool dot) {
  return slices_fixed<8>(sp, row_of, v, c, x, y, s0, s1, dot);
}

}  // namespace

SellForm build_sell(const at::Tensor& row_ptr, const at::Tensor& col_idx, const at::Tensor& values, int64_t rows,
                    int chunk, int64_t sigma) {
  TESSERA_CHECK(chunk == 4 || chunk == 8, InvalidInput, "SELL-C-sigma: C must be 4 or 8, got ", chunk);
  TESSERA_CHECK(sigma >= 1 && rows < (int64_t{1} << 31), InvalidInput, "SELL-C-sigma: sigma >= 1 and rows < 2^31");
  TESSERA_CHECK(values.scalar_type() == at::kDouble && values.is_contiguous(), InvalidInput,
                "SELL-C-sigma: float64 contiguous values");
  if (row_ptr.scalar_type() == at::kInt) {
    return build_typed(row_ptr.data_ptr<int32_t>(), col_idx.data_ptr<int32_t>(), values.data_ptr<double>(), rows,
                       chunk, sigma);
  }
  return build_typed(row_ptr.data_ptr<int64_t>(), col_idx.data_ptr<int64_t>(), values.data_ptr<double>(), rows,
                     chunk, sigma);
}

RowLengthStats row_length_stats(const at::Tensor& row_ptr) {
  const int64_t rows = row_ptr.size(0) - 1;
  RowLengthStats s;
  if (rows <= 0) return s;
  double sum = 0.0, sq = 0.0;
  auto scan = [&](const auto* rp) {
    for (int64_t i = 0; i < rows; ++i) {
      const double len = static_cast<double>(rp[i + 1] - rp[i]);
      sum += len;
      sq += len * len;
      s.max = std::max<int64_t>(s.max, static_cast<int64_t>(len));
    }
  };
  if (row_ptr.scalar_type() == at::kInt) scan(row_ptr.data_ptr<int32_t>()); else scan(row_ptr.data_ptr<int64_t>());
  s.mean = sum / static_cast<double>(rows);
  s.stddev = std::sqrt(std::max(0.0, sq / static_cast<double>(rows) - s.mean * s.mean));
  return s;
}

int64_t choose_sell_sigma(const at::Tensor& row_ptr, int chunk) {
  const int64_t rows = row_ptr.size(0) - 1;
  int64_t stored = 0, nnz = 0;
  auto scan = [&](const auto* rp) {
    nnz = static_cast<int64_t>(rp[rows]);
    for (int64_t s0 = 0; s0 < rows; s0 += chunk) {   // each slice padded to its longest row
      int64_t width = 0;
      for (int64_t i = s0; i < std::min(rows, s0 + chunk); ++i) width = std::max<int64_t>(width, rp[i + 1] - rp[i]);
      stored += width * chunk;
    }
  };
  if (row_ptr.scalar_type() == at::kInt) scan(row_ptr.data_ptr<int32_t>()); else scan(row_ptr.data_ptr<int64_t>());
  return static_cast<double>(stored) <= 1.1 * static_cast<double>(nnz) ? chunk : 256;
}

bool sell_pays(const RowLengthStats& s, int64_t rows) {
  return rows >= (int64_t{1} << 17) && s.mean > 0.0 && s.mean <= 32.0 && s.stddev <= s.mean;
}

double sell_slices(const SellForm& f, const double* x, double* y, int64_t s0, int64_t s1, bool dot) {
  const double* v = f.values.data_ptr<double>();
  const int32_t* c = f.cols.data_ptr<int32_t>();
  const int64_t* sp = f.slice_ptr.data();
  if (f.in_order()) {
#ifdef TESSERA_CPU_CLONES_X86
    if (f.chunk == 8 && avx2_fma_available() && reinterpret_cast<uintptr_t>(y) % 64 == 0) {
      return in_order8_stream(sp, v, c, x, y, f.rows, s0, s1, dot);
    }
#endif
    return f.chunk == 4 ? in_order4(sp, v, c, x, y, f.rows, s0, s1, dot) : in_order8(sp, v, c, x, y, f.rows, s0, s1, dot);
  }
  if (f.chunk == 4) return slices4(f.slice_ptr.data(), f.row_of.data(), v, c, x, y, s0, s1, dot);
  return slices8(f.slice_ptr.data(), f.row_of.data(), v, c, x, y, s0, s1, dot);
}

std::vector<int64_t> balance_slices(const SellForm& f, int threads) {
  return balance_slice_ptr(f.slice_ptr, f.chunk, threads);
}

std::vector<int64_t> balance_slice_ptr(const std::vector<int64_t>& slice_ptr, int chunk, int threads) {
  const int64_t slices = static_cast<int64_t>(slice_ptr.size()) - 1, total = slice_ptr.back();
  std::vector<int64_t> blocks(static_cast<size_t>(threads) + 1, slices);
  blocks[0] = 0;
  for (int t = 1; t < threads; ++t) {
    // first slice whose start (entries plus C per slice for the stores) reaches t / threads
    const int64_t target = (total + slices * chunk) * t / threads;
    const auto it = std::lower_bound(slice_ptr.begin() + blocks[t - 1], slice_ptr.end() - 1, target,
                                     [&](const int64_t& p, int64_t tgt) {
                                       const int64_t s = &p - slice_ptr.data();
                                       return p + s * chunk < tgt;
                                     });
    blocks[t] = it - slice_ptr.begin();
  }
  return blocks;
}

}  // namespace tessera::sla::detail
