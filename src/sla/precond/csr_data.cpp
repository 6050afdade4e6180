// CsrData: conversion from SparseTensor, transpose, and sparse-sparse products (Gustavson's
// row-by-row algorithm with a dense accumulator per thread: a symbolic pass counts each
// row's distinct columns, a numeric pass fills them in sorted order).

#include "sla/precond/csr_data.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <omp.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "sla/kernels/csr_kernels.h"
#include "sla/kernels/spmv.h"
#include "tessera/core/error.h"

namespace tessera::sla::detail {
namespace {

/// The common index type of several matrices (int64 if any is int64).
at::ScalarType common_index(std::initializer_list<const CsrData*> ms) {
  for (const CsrData* m : ms) {
    if (m->row_ptr.scalar_type() == at::kLong) return at::kLong;
  }
  return at::kInt;
}

CsrData with_index(const CsrData& m, at::ScalarType t) {
  if (m.row_ptr.scalar_type() == t) return m;
  CsrData out = m;
  out.plan = nullptr;   // the plan reads the old index tensors
  out.row_ptr = m.row_ptr.to(t);
  out.col_idx = m.col_idx.to(t);
  return out;
}

/// Runs `row_products(i, emit)` for every output row; emit(col, value) adds one product term.
/// Returns the CSR of the sums with sorted columns.
template <typename I, typename RowProducts>
CsrData gustavson(int64_t rows, int64_t cols, const RowProducts& row_products) {
  std::vector<int64_t> counts(rows + 1, 0);
#pragma omp parallel
  {
    std::vector<int64_t> marker(cols, -1);
#pragma omp for schedule(dynamic, 512)
    for (int64_t i = 0; i < rows; ++i) {
      int64_t c = 0;
      row_products(i, [&](int64_t col, double) {
        if (marker[col] != i) { marker[col] = i; ++c; }   // first time column `col` appears in row i
      });
      counts[i + 1] = c;
    }
  }
  for (int64_t i = 0; i < rows; ++i) counts[i + 1] += counts[i];   // row_ptr = prefix sum
  const int64_t nnz = counts[rows];
  TESSERA_CHECK(sizeof(I) == 8 || (nnz <= std::numeric_limits<int32_t>::max()), Unsupported,
                "sparse product: ", nnz, " entries exceed int32 indices");
  const auto itype = sizeof(I) == 4 ? at::kInt : at::kLong;
  at::Tensor rp = at::empty({rows + 1}, itype), ci = at::empty({nnz}, itype), va = at::empty({nnz}, at::kDouble);
  I* rpp = rp.data_ptr<I>();
  I* cip = ci.data_ptr<I>();
  double* vap = va.data_ptr<double>();
  for (int64_t i = 0; i <= rows; ++i) rpp[i] = static_cast<I>(counts[i]);
#pragma omp parallel
  {
    std::vector<int64_t> marker(cols, -1);
    std::vector<double> acc(cols, 0.0);
#pragma omp for schedule(dynamic, 512)
    for (int64_t i = 0; i < rows; ++i) {
      I* row_cols = cip + counts[i];
      int64_t c = 0;
      row_products(i, [&](int64_t col, double v) {
        if (marker[col] != i) { marker[col] = i; acc[col] = 0.0; row_cols[c++] = static_cast<I>(col); }
        acc[col] += v;                                   // c_i,col += a_ik b_k,col
      });
      std::sort(row_cols, row_cols + c);
      for (int64_t q = 0; q < c; ++q) vap[counts[i] + q] = acc[row_cols[q]];
    }
  }
  return CsrData{rp, ci, va, rows, cols, nullptr};
}

}  // namespace

void CsrData::prepare() {
  if (plan || !values.defined() || !values.is_cpu() || values.scalar_type() != at::kDouble) return;
  // the stencil form (1 byte per row) when the matrix has one, else the CSR tensors as they
  // are: a level never holds a second, reformatted copy of its matrix
  const bool stencil = detect_stencil(row_ptr, col_idx, values, rows).found();
  plan = std::make_shared<const SpmvPlan>(row_ptr, col_idx, values, rows, cols,
                                          stencil ? SpmvFormat::Stencil : SpmvFormat::Csr);
}

at::Tensor CsrData::apply(const at::Tensor& x) const {
  if (plan && x.is_cpu() && x.scalar_type() == at::kDouble) {
    at::Tensor y = at::empty({rows}, x.options());
    plan->apply(x.contiguous(), y);                                // y = A x, no per-product set-up
    return y;
  }
  return csr_spmm(row_ptr, col_idx, {}, values.view({1, nnz()}), x.reshape({1, cols, 1}), rows).view({rows});
}

void CsrData::apply(const at::Tensor& x, at::Tensor& y) const {
  if (plan && x.is_cpu() && x.scalar_type() == at::kDouble && y.is_contiguous()) {
    plan->apply(x.contiguous(), y);                                // y = A x in place
    return;
  }
  y.copy_(apply(x));
}

at::Tensor CsrData::apply_transposed(const at::Tensor& x) const {
  if (!x.is_cpu() || !row_ptr.is_cpu()) {   // y_j = sum_{(i, j) stored} a_ij x_i, with ATen ops
    const at::Tensor row = csr_row_indices(row_ptr, nnz());
    return at::zeros({cols}, x.options()).index_add_(0, col_idx.to(at::kLong), values * x.index_select(0, row));
  }
  const at::Tensor xc = x.contiguous().to(at::kDouble);
  const int threads = rows * 4 < 65536 ? 1 : std::max(1, at::get_num_threads());
  at::Tensor partial = at::zeros({threads, cols}, at::kDouble);      // one [cols] buffer per thread
  const double* xp = xc.data_ptr<double>();
  const double* vp = values.data_ptr<double>();
  double* buf = partial.data_ptr<double>();
  with_index_type(row_ptr.scalar_type(), [&]<typename I>() {
    const I* rp = row_ptr.data_ptr<I>();
    const I* ci = col_idx.data_ptr<I>();
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num(), team = omp_get_num_threads();
      double* y = buf + static_cast<int64_t>(t) * cols;
      for (int64_t i = rows * t / team; i < rows * (t + 1) / team; ++i) {
        for (I p = rp[i]; p < rp[i + 1]; ++p) y[ci[p]] += vp[p] * xp[i];   // y_j += a_ij x_i
      }
    }
  });
  return (threads == 1 ? partial[0] : partial.sum(0)).to(x.scalar_type());
}

at::Tensor CsrData::diagonal() const {
  const int64_t n = std::min(rows, cols);
  if (row_ptr.is_cpu()) {   // a_ii by binary search in each row's sorted columns: no nnz-sized temporary
    at::Tensor d = at::zeros({n}, values.options());
    double* dp = d.data_ptr<double>();
    const double* vp = values.data_ptr<double>();
    with_index_type(row_ptr.scalar_type(), [&]<typename I>() {
      const I* rp = row_ptr.data_ptr<I>();
      const I* ci = col_idx.data_ptr<I>();
#pragma omp parallel for schedule(static) if (n > 65536)
      for (int64_t i = 0; i < n; ++i) {
        const I* hit = std::lower_bound(ci + rp[i], ci + rp[i + 1], static_cast<I>(i));
        if (hit != ci + rp[i + 1] && *hit == i) dp[i] = vp[hit - ci];
      }
    });
    return d;
  }
  at::Tensor row = csr_row_indices(row_ptr, nnz());
  at::Tensor col = col_idx.to(at::kLong);
  at::Tensor on = row == col;
  return at::zeros({n}, values.options()).index_put_({row.masked_select(on)}, values.masked_select(on));
}

at::Tensor CsrData::to_dense() const {
  at::Tensor dense = at::zeros({rows, cols}, values.options());
  at::Tensor row = csr_row_indices(row_ptr, nnz());
  return dense.index_put_({row, col_idx.to(at::kLong)}, values, /*accumulate=*/true);
}

CsrData csr_of(const SparseTensor& a, int64_t batch) {
  at::Tensor values =
      a.values().detach().reshape({a.batch_size(), a.nnz()}).select(0, batch).to(at::kDouble).contiguous();
  return CsrData{a.row_ptr(), a.col_idx(), values, a.rows(), a.cols(), nullptr};
}

at::ScalarType index_dtype_for(int64_t nnz, int64_t cols) {
  const int64_t limit = std::numeric_limits<int32_t>::max();
  return nnz <= limit && cols <= limit ? at::kInt : at::kLong;
}

CsrData csr_transpose(const CsrData& a) {
  CsrData out;
  out.rows = a.cols;
  out.cols = a.rows;
  const int64_t nnz = a.nnz();
  out.row_ptr = at::zeros({a.cols + 1}, a.row_ptr.options());
  out.col_idx = at::empty({nnz}, a.col_idx.options());
  out.values = at::empty({nnz}, a.values.options());
  with_index_type(a.row_ptr.scalar_type(), [&]<typename I>() {
    const I* rp = a.row_ptr.data_ptr<I>();
    const I* ci = a.col_idx.data_ptr<I>();
    const double* va = a.values.data_ptr<double>();
    I* trp = out.row_ptr.data_ptr<I>();
    I* tci = out.col_idx.data_ptr<I>();
    double* tva = out.values.data_ptr<double>();
    for (int64_t p = 0; p < nnz; ++p) ++trp[ci[p] + 1];           // entries per column
    for (int64_t j = 0; j < a.cols; ++j) trp[j + 1] += trp[j];
    std::vector<I> next(trp, trp + a.cols);
    for (int64_t i = 0; i < a.rows; ++i) {                         // rows ascending: columns of A^T sorted
      for (I p = rp[i]; p < rp[i + 1]; ++p) {
        const I q = next[ci[p]]++;
        tci[q] = static_cast<I>(i);                                // A^T(j, i) = A(i, j)
        tva[q] = va[p];
      }
    }
  });
  return out;
}

CsrData csr_multiply(const CsrData& a0, const CsrData& b0) {
  TESSERA_CHECK(a0.cols == b0.rows, DimensionMismatch, "csr_multiply: ", a0.rows, "x", a0.cols, " times ",
                b0.rows, "x", b0.cols);
  const at::ScalarType t = common_index({&a0, &b0});
  const CsrData a = with_index(a0, t), b = with_index(b0, t);
  CsrData out;
  with_index_type(t, [&]<typename I>() {
    const I *arp = a.row_ptr.data_ptr<I>(), *aci = a.col_idx.data_ptr<I>();
    const I *brp = b.row_ptr.data_ptr<I>(), *bci = b.col_idx.data_ptr<I>();
    const double *ava = a.values.data_ptr<double>(), *bva = b.values.data_ptr<double>();
    out = gustavson<I>(a.rows, b.cols, [&](int64_t i, auto&& emit) {
      for (I p = arp[i]; p < arp[i + 1]; ++p) {
        const I k = aci[p];
        for (I q = brp[k]; q < brp[k + 1]; ++q) emit(bci[q], ava[p] * bva[q]);   // a_ik b_kj
      }
    });
  });
  return out;
}

CsrData csr_triple_product(const CsrData& r, const CsrData& a, const CsrData& p) {
  TESSERA_CHECK(r.cols == a.rows && a.cols == p.rows, DimensionMismatch, "csr_triple_product: shapes ", r.rows,
                "x", r.cols, ", ", a.rows, "x", a.cols, ", ", p.rows, "x", p.cols);
  return csr_multiply(r, csr_multiply(a, p));   // R (A P): each row of A P formed once, freed after
}

}  // namespace tessera::sla::detail
