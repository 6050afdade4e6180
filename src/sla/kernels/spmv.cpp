// Single-vector CSR and stencil products (CPU), see spmv.h.

#include "sla/kernels/spmv.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "sla/kernels/lane_sums.h"
#include "sla/kernels/row_blocks.h"
#include "sla/kernels/stencil_rows.h"
#include "tessera/core/error.h"

namespace tessera::sla::detail {
namespace {

/// Below this many multiply-adds a product runs on one thread: waking the team costs more.
constexpr int64_t kParallelWork = 1 << 16;
constexpr int kMaxThreads = kMaxBlockThreads;

/// Rows [r0, r1) of y = A x in CSR; returns sum_i x_i y_i when kDot.
template <bool kDot, typename index_t, typename value_t, typename vec_t>
double csr_rows(const index_t* rp, const index_t* ci, const value_t* v, const vec_t* x, vec_t* y, int64_t r0,
                int64_t r1) {
  double dot = 0.0;
  index_t p = rp[r0];
  for (int64_t i = r0; i < r1; ++i) {
    const index_t end = rp[i + 1];
    vec_t s = 0;
    for (; p < end; ++p) s += static_cast<vec_t>(v[p]) * x[ci[p]];   // y_i = sum_j a_ij x_j
    y[i] = s;
    if constexpr (kDot) dot += static_cast<double>(s) * x[i];          // <x, y>
  }
  return dot;
}

template <int ND, bool kDot, typename vec_t>
double stencil_blocks(const StencilForm& s, const std::vector<int64_t>& blocks, const vec_t* x, vec_t* y) {
  const StencilTaps<ND, vec_t> taps(s);
  return reduce_blocks<double>(blocks, [&](int64_t a, int64_t b) { return stencil_rows<ND, kDot>(taps, x, y, a, b); });
}

template <bool kDot, typename vec_t>
double stencil_product(const StencilForm& s, const std::vector<int64_t>& blocks, const vec_t* x, vec_t* y) {
  switch (s.offsets.size()) {
    case 5: return stencil_blocks<5, kDot>(s, blocks, x, y);
    case 7: return stencil_blocks<7, kDot>(s, blocks, x, y);
    default: return stencil_blocks<0, kDot>(s, blocks, x, y);
  }
}

template <bool kDot, typename index_t, typename value_t, typename vec_t>
double csr_product(const at::Tensor& row_ptr, const at::Tensor& col_idx, const value_t* v,
                   const std::vector<int64_t>& blocks, const vec_t* x, vec_t* y) {
  const index_t* rp = row_ptr.data_ptr<index_t>();
  const index_t* ci = col_idx.data_ptr<index_t>();
  return reduce_blocks<double>(blocks, [&](int64_t a, int64_t b) { return csr_rows<kDot>(rp, ci, v, x, y, a, b); });
}

/// Dispatches on the index type of the pattern.
template <bool kDot, typename value_t, typename vec_t>
double csr_dispatch(const at::Tensor& row_ptr, const at::Tensor& col_idx, const value_t* v,
                    const std::vector<int64_t>& blocks, const vec_t* x, vec_t* y) {
  if (row_ptr.scalar_type() == at::kInt) return csr_product<kDot, int32_t>(row_ptr, col_idx, v, blocks, x, y);
  return csr_product<kDot, int64_t>(row_ptr, col_idx, v, blocks, x, y);
}

template <typename index_t>
StencilForm detect_stencil_typed(const index_t* rp, const index_t* ci, const double* v, int64_t rows) {
  StencilForm s;
  at::Tensor mask = at::zeros({rows}, at::kByte);
  uint8_t* m = mask.data_ptr<uint8_t>();
  std::vector<int64_t> off;
  std::vector<double> coeff;
  for (int64_t i = 0; i < rows; ++i) {
    for (index_t p = rp[i]; p < rp[i + 1]; ++p) {
      const int64_t o = static_cast<int64_t>(ci[p]) - i;                // diagonal of a_ij: j - i
      size_t d = 0;
      while (d < off.size() && off[d] != o) ++d;
      if (d == off.size()) {
        if (off.size() == kMaxStencilDiagonals) return s;                       // too many diagonals
        off.push_back(o);
        coeff.push_back(v[p]);
      } else if (!(coeff[d] == v[p]) || std::signbit(coeff[d]) != std::signbit(v[p])) {
        return s;                                                        // not constant on the diagonal
      }
      m[i] |= static_cast<uint8_t>(1u << d);
    }
  }
  if (off.empty()) return s;
  // Renumber the bits so that bit d is the d-th smallest offset (the CSR column order).
  std::vector<int> order(off.size());
  for (size_t d = 0; d < off.size(); ++d) order[d] = static_cast<int>(d);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return off[a] < off[b]; });
  uint8_t remap[256];
  for (unsigned old = 0; old < 256; ++old) {
    unsigned out = 0;
    for (size_t d = 0; d < order.size(); ++d) out |= ((old >> order[d]) & 1u) << d;
    remap[old] = static_cast<uint8_t>(out);
  }
  for (int64_t i = 0; i < rows; ++i) m[i] = remap[m[i]];
  for (int d : order) {
    s.offsets.push_back(off[d]);
    s.coeffs.push_back(coeff[d]);
  }
  s.mask = mask;
  return s;
}

}  // namespace

int spmv_threads(int64_t nnz) { return nnz < kParallelWork ? 1 : std::min(at::get_num_threads(), kMaxThreads); }

std::vector<int64_t> balance_rows(const at::Tensor& row_ptr, int threads) {
  const int64_t rows = row_ptr.size(0) - 1;
  auto start = [&](int64_t i) {   // row_ptr[i] without copying the pattern
    return row_ptr.scalar_type() == at::kInt ? static_cast<int64_t>(row_ptr.data_ptr<int32_t>()[i])
                                             : row_ptr.data_ptr<int64_t>()[i];
  };
  const int64_t nnz = start(rows);
  std::vector<int64_t> blocks(static_cast<size_t>(threads) + 1, rows);
  blocks[0] = 0;
  for (int t = 1; t < threads; ++t) {
    // first row i with row_ptr[i] + i >= t / threads of (nnz + rows): nonzeros and rows both cost
    const int64_t target = (nnz + rows) * t / threads;
    int64_t lo = blocks[t - 1], hi = rows;
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (start(mid) + mid < target) lo = mid + 1; else hi = mid;
    }
    blocks[t] = lo;
  }
  return blocks;
}

int64_t StencilForm::stored() const {
  if (!found()) return 0;
  const uint8_t* m = mask.data_ptr<uint8_t>();
  const int64_t rows = mask.numel();
  int64_t total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total) if (rows > 65536)
  for (int64_t i = 0; i < rows; ++i) total += __builtin_popcount(m[i]);
  return total;
}

std::vector<int64_t> StencilForm::balance(int threads) const {
  // balance_rows's rule, first row i with start(i) + i >= (nnz + rows) t / threads, where
  // start(i) = entries of the rows before i: one pass over the mask instead of a row pointer
  const int64_t rows = mask.numel();
  const uint8_t* m = mask.data_ptr<uint8_t>();
  const int64_t nnz = stored();
  std::vector<int64_t> blocks(static_cast<size_t>(threads) + 1, rows);
  blocks[0] = 0;
  int t = 1;
  int64_t start = 0;
  for (int64_t i = 0; i < rows && t < threads; ++i) {
    while (t < threads && start + i >= (nnz + rows) * t / threads) blocks[t++] = i;
    start += __builtin_popcount(m[i]);
  }
  return blocks;
}

StencilForm detect_stencil(const at::Tensor& row_ptr, const at::Tensor& col_idx, const at::Tensor& values,
                           int64_t rows) {
  at::Tensor v = values.to(at::kDouble).contiguous();
  if (row_ptr.scalar_type() == at::kInt) {
    return detect_stencil_typed(row_ptr.data_ptr<int32_t>(), col_idx.data_ptr<int32_t>(), v.data_ptr<double>(), rows);
  }
  return detect_stencil_typed(row_ptr.data_ptr<int64_t>(), col_idx.data_ptr<int64_t>(), v.data_ptr<double>(), rows);
}

SpmvPlan::SpmvPlan(at::Tensor row_ptr, at::Tensor col_idx, at::Tensor values, int64_t rows, int64_t cols,
                   SpmvFormat format, int threads)
    : row_ptr_(row_ptr.contiguous()), col_idx_(col_idx.contiguous()), values_(values.contiguous()),
      rows_(rows), cols_(cols) {
  TESSERA_CHECK(values_.is_cpu() && values_.dim() == 1 && values_.size(0) == col_idx_.size(0), InvalidInput,
                "SpmvPlan: values must be a CPU tensor [nnz]");
  TESSERA_CHECK(values_.scalar_type() == at::kDouble || values_.scalar_type() == at::kFloat, Unsupported,
                "SpmvPlan: float32 or float64 values");
  if (format == SpmvFormat::Auto || format == SpmvFormat::Stencil) stencil_ = detect_stencil(row_ptr_, col_idx_, values_, rows);
  TESSERA_CHECK(format != SpmvFormat::Stencil || stencil_.found(), InvalidInput,
                "SpmvPlan: the matrix is not a constant-coefficient stencil (at most 8 diagonals, one value each)");
  const int nt = threads > 0 ? std::min(threads, kMaxThreads) : spmv_threads(values_.numel());
  const bool f64 = values_.scalar_type() == at::kDouble && cols < (int64_t{1} << 31);
  TESSERA_CHECK((format != SpmvFormat::Sell && format != SpmvFormat::SellSymmetric) || f64, Unsupported,
                "SpmvPlan: SELL-C-sigma needs float64 values");
  const bool sell = format == SpmvFormat::Sell || format == SpmvFormat::SellSymmetric ||
                    (format == SpmvFormat::Auto && !stencil_.found() && f64 && sell_pays(row_length_stats(row_ptr_), rows));
  if (sell && rows == cols && format != SpmvFormat::Sell) {
    std::string why;
    sym_ = build_sell_sym(row_ptr_, col_idx_, values_, rows, kMaxSymRing, &why);
    TESSERA_CHECK(format != SpmvFormat::SellSymmetric || !sym_.empty(), InvalidInput,
                  "SpmvPlan: symmetric SELL needs a symmetric matrix: this one is ", why);
  }
  TESSERA_CHECK(format != SpmvFormat::SellSymmetric || rows == cols, InvalidInput,
                "SpmvPlan: symmetric SELL needs a square matrix");
  if (uses_sell_sym()) {
    blocks_ = balance_slice_ptr(sym_.slice_ptr, SellSymForm::kChunk, nt);
    row_blocks_ = balance_rows(row_ptr_, nt);
    format_name_ = "sell-sym-" + std::to_string(SellSymForm::kChunk);
  } else if (sell) {
    sell_ = build_sell(row_ptr_, col_idx_, values_, rows, 8, choose_sell_sigma(row_ptr_, 8));
    blocks_ = balance_slices(sell_, nt);
    row_blocks_ = balance_rows(row_ptr_, nt);
    format_name_ = "sell-" + std::to_string(sell_.chunk) + "-" + std::to_string(sell_.sigma);
  } else {
    blocks_ = balance_rows(row_ptr_, nt);
    row_blocks_ = blocks_;
    format_name_ = uses_stencil() ? "stencil" : values_.scalar_type() == at::kFloat ? "csr-f32values" : "csr";
  }
}

SpmvPlan::SpmvPlan(StencilForm stencil, int threads) : stencil_(std::move(stencil)) {
  TESSERA_CHECK(stencil_.found() && stencil_.mask.is_cpu() && stencil_.mask.scalar_type() == at::kByte &&
                    stencil_.mask.dim() == 1 && stencil_.offsets.size() <= kMaxStencilDiagonals &&
                    stencil_.coeffs.size() == stencil_.offsets.size(),
                InvalidInput, "SpmvPlan: a stencil form needs 1 to 8 diagonals and a uint8 mask [rows] on the CPU");
  stencil_.mask = stencil_.mask.contiguous();
  rows_ = cols_ = stencil_.mask.numel();
  const int nt = threads > 0 ? std::min(threads, kMaxThreads) : spmv_threads(stencil_.stored());
  blocks_ = stencil_.balance(nt);
  row_blocks_ = blocks_;
  format_name_ = "stencil";
}

const char* SpmvPlan::format_name() const { return format_name_.c_str(); }

double SpmvPlan::bytes_per_apply() const {
  const double vec = 8.0;   // float64 vectors
  if (uses_stencil()) return static_cast<double>(rows_) * (1.0 + vec) + static_cast<double>(cols_) * vec;
  if (uses_sell()) return static_cast<double>(sell_.stored()) * 12.0 + static_cast<double>(rows_ + cols_) * vec;
  if (uses_sell_sym()) return sym_.matrix_bytes() + static_cast<double>(rows_ + cols_) * vec;
  const double per_nnz = static_cast<double>(values_.element_size() + col_idx_.element_size());
  return static_cast<double>(values_.numel()) * per_nnz + static_cast<double>(rows_ + cols_) * vec;
}

double SpmvPlan::run(const at::Tensor& x, at::Tensor& y, bool dot) const {
  TESSERA_CHECK(x.is_cpu() && x.is_contiguous() && x.numel() == cols_ && y.is_contiguous() && y.numel() == rows_,
                DimensionMismatch, "SpmvPlan: x must be [", cols_, "] and y [", rows_, "], contiguous CPU");
  TESSERA_CHECK(!dot || rows_ == cols_, InvalidInput, "SpmvPlan::apply_dot needs a square matrix");
  const bool f64 = x.scalar_type() == at::kDouble;
  TESSERA_CHECK(x.scalar_type() == y.scalar_type() && (f64 || values_.scalar_type() == at::kFloat), InvalidInput,
                "SpmvPlan: vectors must be float64 (or float32 with float32 values)");
  if (f64) {
    const double* xp = x.data_ptr<double>();
    double* yp = y.data_ptr<double>();
    if (uses_sell()) return sell_product(xp, yp, dot);
    if (uses_sell_sym()) return sell_sym_product(xp, yp, dot);
    if (uses_stencil()) return dot ? stencil_product<true>(stencil_, blocks_, xp, yp) : stencil_product<false>(stencil_, blocks_, xp, yp);
    if (values_.scalar_type() == at::kFloat) {   // float32 values, float64 accumulation
      const float* v = values_.data_ptr<float>();
      return dot ? csr_dispatch<true>(row_ptr_, col_idx_, v, blocks_, xp, yp)
                 : csr_dispatch<false>(row_ptr_, col_idx_, v, blocks_, xp, yp);
    }
    const double* v = values_.data_ptr<double>();
    return dot ? csr_dispatch<true>(row_ptr_, col_idx_, v, blocks_, xp, yp)
               : csr_dispatch<false>(row_ptr_, col_idx_, v, blocks_, xp, yp);
  }
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  if (uses_stencil()) return dot ? stencil_product<true>(stencil_, blocks_, xp, yp) : stencil_product<false>(stencil_, blocks_, xp, yp);
  const float* v = values_.data_ptr<float>();
  return dot ? csr_dispatch<true>(row_ptr_, col_idx_, v, blocks_, xp, yp)
             : csr_dispatch<false>(row_ptr_, col_idx_, v, blocks_, xp, yp);
}

void SpmvPlan::apply(const at::Tensor& x, at::Tensor& y) const { run(x, y, false); }

double SpmvPlan::sell_product(const double* x, double* y, bool dot) const {
  return reduce_blocks<double>(blocks_, [&](int64_t a, int64_t b) { return sell_slices(sell_, x, y, a, b, dot); });
}

double SpmvPlan::sell_sym_product(const double* x, double* y, bool dot) const {
  return reduce_blocks<double>(blocks_, [&](int64_t a, int64_t b) { return sell_sym_slices(sym_, x, y, a, b, dot); });
}

void SpmvPlan::apply(const double* x, double* y) const {
  if (uses_sell()) {
    sell_product(x, y, false);
    return;
  }
  if (uses_sell_sym()) {
    sell_sym_product(x, y, false);
    return;
  }
  if (uses_stencil()) {
    stencil_product<false>(stencil_, blocks_, x, y);
    return;
  }
  TESSERA_CHECK(values_.scalar_type() == at::kDouble, InvalidInput, "SpmvPlan: raw float64 apply needs float64 values");
  csr_dispatch<false>(row_ptr_, col_idx_, values_.data_ptr<double>(), blocks_, x, y);
}

double SpmvPlan::apply_dot(const at::Tensor& x, at::Tensor& y) const { return run(x, y, true); }

void csr_spmv_batched(const at::Tensor& row_ptr, const at::Tensor& col_idx, const at::Tensor& values,
                      const at::Tensor& x, at::Tensor& y) {
  const int64_t batch = values.size(0), nnz = values.size(1), rows = y.size(1), cols = x.size(1);
  const std::vector<int64_t> blocks = balance_rows(row_ptr, spmv_threads(nnz));
  AT_DISPATCH_FLOATING_TYPES(values.scalar_type(), "csr_spmv_batched", [&] {
    for (int64_t b = 0; b < batch; ++b) {
      const scalar_t* v = values.data_ptr<scalar_t>() + b * nnz;
      const scalar_t* xp = x.data_ptr<scalar_t>() + (x.size(0) == 1 ? 0 : b * cols);
      scalar_t* yp = y.data_ptr<scalar_t>() + b * rows;
      csr_dispatch<false>(row_ptr, col_idx, v, blocks, xp, yp);   // y_b = A_b x_b
    }
  });
}

}  // namespace tessera::sla::detail
