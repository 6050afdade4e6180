// Symmetric SELL build and product (see sell_sym.h).

#include "sla/kernels/sell_sym.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "sla/kernels/column_runs.h"
#include "tessera/core/cpu_clones.h"
#include "tessera/core/error.h"

#ifdef TESSERA_CPU_CLONES_X86
#include <immintrin.h>
#endif

namespace tessera::sla::detail {
namespace {

constexpr int C = SellSymForm::kChunk;

template <typename index_t>
SellSymForm build_typed(const index_t* rp, const index_t* ci, const double* v, int64_t rows, int64_t max_ring,
                        std::string* why) {
  auto refuse = [&](const std::string& reason) {
    if (why) *why = reason;
    return SellSymForm{};
  };
  // One pass: columns strictly increasing in every row, every a_ij (j > i) mirrored by an
  // equal a_ji (binary search in row j), as many entries below the diagonal as above.
  bool symmetric = true;
  int64_t reach = 0, lower = 0, upper = 0;
#pragma omp parallel for schedule(static) reduction(&& : symmetric) reduction(max : reach) reduction(+ : lower, upper)
  for (int64_t i = 0; i < rows; ++i) {
    for (index_t p = rp[i]; p < rp[i + 1] && symmetric; ++p) {
      const int64_t j = ci[p];
      if (p > rp[i] && !(ci[p - 1] < ci[p])) symmetric = false;    // unsorted or repeated column
      if (j < 0 || j >= rows) symmetric = false;                     // not square
      if (j < i) ++lower;
      if (j <= i || !symmetric) continue;
      ++upper;
      reach = std::max(reach, j - i);
      const index_t* q = std::lower_bound(ci + rp[j], ci + rp[j + 1], static_cast<index_t>(i));
      symmetric = q != ci + rp[j + 1] && *q == i && v[q - ci] == v[p];   // a_ji == a_ij
    }
  }
  if (!symmetric || lower != upper) return refuse("not symmetric bit for bit (a_ij == a_ji, columns sorted)");
  int64_t ring = 2 * C;
  while (ring < reach + 2 * C) ring *= 2;
  if (ring > max_ring) {
    return refuse("its bandwidth " + std::to_string(reach) + " needs a ring of " + std::to_string(ring) +
                  " slots (at most " + std::to_string(max_ring) + ")");
  }
  SellSymForm f;
  f.rows = rows;
  f.nnz = static_cast<int64_t>(rp[rows]);
  f.reach = reach;
  f.ring = ring;
  const int64_t slices = (rows + C - 1) / C;
  // the upper part of row i: its entries after the diagonal, [upper_begin(i), rp[i + 1])
  auto upper_begin = [&](int64_t i) {
    return static_cast<int64_t>(std::upper_bound(ci + rp[i], ci + rp[i + 1], static_cast<index_t>(i)) - ci);
  };
  f.slice_ptr.assign(static_cast<size_t>(slices) + 1, 0);
  for (int64_t s = 0; s < slices; ++s) {
    int64_t width = 0;
    for (int64_t i = s * C; i < std::min(rows, s * C + C); ++i) width = std::max<int64_t>(width, rp[i + 1] - upper_begin(i));
    f.slice_ptr[s + 1] = f.slice_ptr[s] + width * C;
  }
  f.values = at::empty({C * slices + f.upper_stored()}, at::kDouble);
  f.cols = at::empty({f.upper_stored()}, at::kInt);
  double* fv = f.values.data_ptr<double>();
  int32_t* fc = f.cols.data_ptr<int32_t>();
#pragma omp parallel for schedule(static)
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t width = (f.slice_ptr[s + 1] - f.slice_ptr[s]) / C;
    double* vs = fv + f.slice_ptr[s] + C * s;
    int32_t* cs = fc + f.slice_ptr[s];
    for (int r = 0; r < C; ++r) {
      const int64_t i = std::min(s * C + r, rows - 1);   // padding rows of the last slice repeat the last row
      const bool real = s * C + r < rows;
      const int64_t u = upper_begin(i), len = real ? static_cast<int64_t>(rp[i + 1]) - u : 0;
      vs[r] = real && u > rp[i] && ci[u - 1] == i ? v[u - 1] : 0.0;   // a_ii (0 when not stored)
      for (int64_t k = 0; k < width; ++k) {
        // padding: value 0 in the row's own column (a slot of the current slice, read after the loop)
        vs[C + k * C + r] = k < len ? v[u + k] : 0.0;
        cs[k * C + r] = static_cast<int32_t>(k < len ? static_cast<int64_t>(ci[u + k]) : i);
      }
    }
  }
  return f;
}

/// Slices [s0, s1), any C lanes (the last slice may be partial): portable, one row at a time.
/// ring: R zeroed slots, mask = R - 1.
TESSERA_CPU_CLONES double sym_slices(const int64_t* sp, const double* v, const int32_t* c, const double* x, double* y,
                                     int64_t rows, int64_t reach, double* ring, int64_t mask, int64_t s0, int64_t s1,
                                     bool dot) {
  // replay: the rows up to `reach` before slice s0 scatter into s0's rows and after
  const int64_t start = s0 * C;
  for (int64_t s = std::max<int64_t>(0, (start - reach) / C); s < s0; ++s) {
    const double* vs = v + sp[s] + C * s;
    const int32_t* cs = c + sp[s];
    for (int64_t p = 0; p < sp[s + 1] - sp[s]; p += C) {
      for (int r = 0; r < C; ++r) {
        const int32_t j = cs[p + r];
        const double t = vs[C + p + r] * x[s * C + r];
        if (j >= start) ring[j & mask] += t;                             // y_j += a_ij x_i
      }
    }
  }
  double lane[C] = {};
  for (int64_t s = s0; s < s1; ++s) {
    const int64_t i0 = s * C;
    const int n = static_cast<int>(std::min<int64_t>(C, rows - i0));
    const double* vs = v + sp[s] + C * s;
    const int32_t* cs = c + sp[s];
    double acc[C] = {}, xi[C] = {};
    for (int r = 0; r < n; ++r) {
      xi[r] = x[i0 + r];
      acc[r] = vs[r] * xi[r];                                            // a_ii x_i
    }
    for (int64_t p = 0; p < sp[s + 1] - sp[s]; p += C) {
      for (int r = 0; r < n; ++r) {
        const int32_t j = cs[p + r];
        const double a = vs[C + p + r];
        acc[r] = acc[r] + a * x[j];                                      // y_i += a_ij x_j
        const double t = a * xi[r];
        ring[j & mask] += t;                                             // y_j += a_ij x_i
      }
    }
    for (int r = 0; r < n; ++r) {
      const int64_t slot = (i0 + r) & mask;
      const double yi = acc[r] + ring[slot];                             // + sum_{k < i} a_ki x_k
      ring[slot] = 0.0;
      y[i0 + r] = yi;
      if (dot) lane[r] += yi * xi[r];
    }
  }
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

#ifdef TESSERA_CPU_CLONES_X86
/// Whether a step's 8 columns are j0, j0 + 1, ..., j0 + 7 with their ring slots in a row (no
/// wrap): then x_j is two vector loads and the scatter two vector additions. Each slot still
/// gets one addition per step, so the sums are the lane-by-lane ones bit for bit.
__attribute__((target("avx2,fma"))) inline bool run_of_8(const int32_t* cols, int64_t mask) {
  return columns_run8(cols) && (cols[0] & mask) + C <= mask + 1;
}

/// ring[0 .. 8) += (lo, hi)
__attribute__((target("avx2,fma"))) inline void scatter_run(double* slots, __m256d lo, __m256d hi) {
  _mm256_storeu_pd(slots, _mm256_add_pd(_mm256_loadu_pd(slots), lo));
  _mm256_storeu_pd(slots + 4, _mm256_add_pd(_mm256_loadu_pd(slots + 4), hi));
}

/// The same on AVX2 for full slices, y by streaming stores (y 64-byte aligned; the caller
/// checks); a partial last slice goes to sym_slices.
__attribute__((target("avx2,fma"))) double sym_slices_stream(const int64_t* sp, const double* v, const int32_t* c,
                                                             const double* x, double* y, int64_t rows, int64_t reach,
                                                             double* ring, int64_t mask, int64_t s0, int64_t s1,
                                                             bool dot) {
  const int64_t full = std::min(s1, rows / C);   // slices [s0, full) are whole
  const int64_t start = s0 * C;
  alignas(32) double t[C];
  for (int64_t s = std::max<int64_t>(0, (start - reach) / C); s < std::min(s0, full); ++s) {   // replay
    const double* vs = v + sp[s] + C * s;
    const int32_t* cs = c + sp[s];
    const __m256d xlo = _mm256_loadu_pd(x + s * C), xhi = _mm256_loadu_pd(x + s * C + 4);
    for (int64_t p = 0; p < sp[s + 1] - sp[s]; p += C) {
      const __m256d tlo = _mm256_mul_pd(_mm256_loadu_pd(vs + C + p), xlo);
      const __m256d thi = _mm256_mul_pd(_mm256_loadu_pd(vs + C + p + 4), xhi);
      if (cs[p] >= start && run_of_8(cs + p, mask)) {
        scatter_run(ring + (cs[p] & mask), tlo, thi);                     // y_j += a_ij x_i, 8 rows j in a row
        continue;
      }
      _mm256_store_pd(t, tlo);
      _mm256_store_pd(t + 4, thi);
      for (int r = 0; r < C; ++r) {
        if (cs[p + r] >= start) ring[cs[p + r] & mask] += t[r];         // y_j += a_ij x_i
      }
    }
  }
  __m256d dsum = _mm256_setzero_pd();
  for (int64_t s = s0; s < full; ++s) {
    const int64_t i0 = s * C;
    const double* vs = v + sp[s] + C * s;
    const int32_t* cs = c + sp[s];
    const __m256d xlo = _mm256_loadu_pd(x + i0), xhi = _mm256_loadu_pd(x + i0 + 4);
    __m256d lo = _mm256_mul_pd(_mm256_loadu_pd(vs), xlo), hi = _mm256_mul_pd(_mm256_loadu_pd(vs + 4), xhi);   // a_ii x_i
    for (int64_t p = 0; p < sp[s + 1] - sp[s]; p += C) {
      const __m256d alo = _mm256_loadu_pd(vs + C + p), ahi = _mm256_loadu_pd(vs + C + p + 4);
      const __m256d tlo = _mm256_mul_pd(alo, xlo), thi = _mm256_mul_pd(ahi, xhi);   // a_ij x_i
      if (run_of_8(cs + p, mask)) {   // the 8 columns are j0 .. j0 + 7 (a banded matrix's inner rows)
        const double* xj = x + cs[p];
        lo = _mm256_add_pd(lo, _mm256_mul_pd(alo, _mm256_loadu_pd(xj)));   // y_i += a_ij x_j
        hi = _mm256_add_pd(hi, _mm256_mul_pd(ahi, _mm256_loadu_pd(xj + 4)));
        scatter_run(ring + (cs[p] & mask), tlo, thi);                     // y_j += a_ij x_i
        continue;
      }
      const __m256d xj_lo = _mm256_set_pd(x[cs[p + 3]], x[cs[p + 2]], x[cs[p + 1]], x[cs[p]]);
      const __m256d xj_hi = _mm256_set_pd(x[cs[p + 7]], x[cs[p + 6]], x[cs[p + 5]], x[cs[p + 4]]);
      lo = _mm256_add_pd(lo, _mm256_mul_pd(alo, xj_lo));                 // y_i += a_ij x_j
      hi = _mm256_add_pd(hi, _mm256_mul_pd(ahi, xj_hi));
      _mm256_store_pd(t, tlo);                                           // scattered in lane order
      _mm256_store_pd(t + 4, thi);
      for (int r = 0; r < C; ++r) ring[cs[p + r] & mask] += t[r];       // y_j += a_ij x_i
    }
    double* slot = ring + (i0 & mask);   // the slice's 8 slots, contiguous (R is a multiple of 8)
    // scalar loads: the slots were just written by scalar stores, which a vector load cannot forward from
    lo = _mm256_add_pd(lo, _mm256_set_pd(slot[3], slot[2], slot[1], slot[0]));   // + sum_{k < i} a_ki x_k
    hi = _mm256_add_pd(hi, _mm256_set_pd(slot[7], slot[6], slot[5], slot[4]));
    _mm256_storeu_pd(slot, _mm256_setzero_pd());
    _mm256_storeu_pd(slot + 4, _mm256_setzero_pd());
    _mm256_stream_pd(y + i0, lo);
    _mm256_stream_pd(y + i0 + 4, hi);
    if (dot) dsum = _mm256_add_pd(dsum, _mm256_add_pd(_mm256_mul_pd(lo, xlo), _mm256_mul_pd(hi, xhi)));
  }
  _mm_sfence();   // the streamed lines are visible before another thread reads y
  _mm256_store_pd(t, dsum);
  double total = (t[0] + t[1]) + (t[2] + t[3]);
  // the partial last slice: its ring slots already hold the whole slices' scatters
  if (full < s1) total += sym_slices(sp, v, c, x, y, rows, 0, ring, mask, std::max(s0, full), s1, dot);
  return total;
}
#endif

}  // namespace

double SellSymForm::matrix_bytes() const {
  return static_cast<double>(values.numel()) * 8.0 + static_cast<double>(cols.numel()) * 4.0;
}

SellSymForm build_sell_sym(const at::Tensor& row_ptr, const at::Tensor& col_idx, const at::Tensor& values,
                           int64_t rows, int64_t max_ring, std::string* why) {
  TESSERA_CHECK(values.scalar_type() == at::kDouble && values.is_contiguous(), InvalidInput,
                "symmetric SELL: float64 contiguous values");
  if (rows >= (int64_t{1} << 31)) {
    if (why) *why = "2^31 rows or more";
    return {};
  }
  if (row_ptr.scalar_type() == at::kInt) {
    return build_typed(row_ptr.data_ptr<int32_t>(), col_idx.data_ptr<int32_t>(), values.data_ptr<double>(), rows,
                       max_ring, why);
  }
  return build_typed(row_ptr.data_ptr<int64_t>(), col_idx.data_ptr<int64_t>(), values.data_ptr<double>(), rows,
                     max_ring, why);
}

double sell_sym_slices(const SellSymForm& f, const double* x, double* y, int64_t s0, int64_t s1, bool dot) {
  thread_local std::vector<double> ring;   // this thread's partial sums (see sell_sym.h)
  if (static_cast<int64_t>(ring.size()) < f.ring) ring.resize(static_cast<size_t>(f.ring));
  std::fill(ring.begin(), ring.begin() + f.ring, 0.0);
  const double* v = f.values.data_ptr<double>();
  const int32_t* c = f.cols.data_ptr<int32_t>();
  const int64_t* sp = f.slice_ptr.data();
#ifdef TESSERA_CPU_CLONES_X86
  if (avx2_fma_available() && reinterpret_cast<uintptr_t>(y) % 64 == 0) {
    return sym_slices_stream(sp, v, c, x, y, f.rows, f.reach, ring.data(), f.ring - 1, s0, s1, dot);
  }
#endif
  return sym_slices(sp, v, c, x, y, f.rows, f.reach, ring.data(), f.ring - 1, s0, s1, dot);
}

}  // namespace tessera::sla::detail
