// CsrData: conversion from SparseTensor, transpose, and sparse-sparse products (Gustavson's
// row-by-row algorithm with a dense accumulator per thread: a symbolic pass counts each
// row's distinct columns, a numeric pass fills them in sorted order).

#include "sla/precond/csr_data.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <omp.h>

#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>

#include "sla/kernels/csr_kernels.h"
#include "sla/kernels/spmv.h"
#include "sla/precond/row_view.h"
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

/// The arrays of a CSR matrix of `rows` rows whose row i holds counts[i + 1] entries: counts
/// becomes the row pointer (prefix sum), which fills row_ptr; col_idx and values are
/// allocated (index type I; `what` names the product when the entries exceed int32).
template <typename I>
std::tuple<at::Tensor, at::Tensor, at::Tensor> csr_arrays(std::vector<int64_t>& counts, int64_t rows,
                                                          const char* what) {
  for (int64_t i = 0; i < rows; ++i) counts[i + 1] += counts[i];  // row_ptr = prefix sum
  const int64_t nnz = counts[rows];
  TESSERA_CHECK(sizeof(I) == 8 || nnz <= std::numeric_limits<int32_t>::max(), Unsupported, what, ": ", nnz,
                " entries exceed int32 indices");
  const auto itype = sizeof(I) == 4 ? at::kInt : at::kLong;
  at::Tensor rp = at::empty({rows + 1}, itype);
  I* rpp = rp.data_ptr<I>();
  for (int64_t i = 0; i <= rows; ++i) rpp[i] = static_cast<I>(counts[i]);
  return {rp, at::empty({nnz}, itype), at::empty({nnz}, at::kDouble)};
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
  at::Tensor rp, ci, va;
  std::tie(rp, ci, va) = csr_arrays<I>(counts, rows, "sparse product");
  I* cip = ci.data_ptr<I>();
  double* vap = va.data_ptr<double>();
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

at::ScalarType CsrData::index_type() const {
  return matrix_free() ? index_dtype_for(nnz(), cols) : row_ptr.scalar_type();
}

void CsrData::prepare() {
  if (plan || !values.defined() || !values.is_cpu() || values.scalar_type() != at::kDouble) return;
  // the stencil form (1 byte per row) when the matrix has one, else the CSR tensors as they
  // are: a level never holds a second, reformatted copy of its matrix
  const bool stencil = detect_stencil(row_ptr, col_idx, values, rows).found();
  plan = std::make_shared<const SpmvPlan>(row_ptr, col_idx, values, rows, cols,
                                          stencil ? SpmvFormat::Stencil : SpmvFormat::Csr);
}

at::Tensor CsrData::apply(const at::Tensor& x) const {
  TESSERA_CHECK(!matrix_free() || (x.is_cpu() && x.scalar_type() == at::kDouble), Unsupported,
                "a matrix-free (stencil) operator applies to float64 CPU vectors only");
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
  TESSERA_CHECK(!matrix_free(), Unsupported,
                "a matrix-free (stencil) operator applies to contiguous float64 CPU vectors only");
  y.copy_(apply(x));
}

at::Tensor CsrData::apply_transposed(const at::Tensor& x) const {
  TESSERA_CHECK(!matrix_free(), Unsupported, "apply_transposed: not of a matrix-free operator");
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

void CsrData::apply_transposed(const at::Tensor& x, at::Tensor& y, at::Tensor& partial) const {
  TESSERA_CHECK(!matrix_free(), Unsupported, "apply_transposed: not of a matrix-free operator");
  if (!x.is_cpu() || !row_ptr.is_cpu() || x.scalar_type() != at::kDouble || !y.is_contiguous()) {
    y.copy_(apply_transposed(x));
    return;
  }
  const at::Tensor xc = x.contiguous();
  const int threads = rows * 4 < 65536 ? 1 : std::max(1, at::get_num_threads());   // as apply_transposed(x)
  if (!partial.defined() || partial.size(0) != threads || partial.size(1) != cols) {
    partial = at::empty({threads, cols}, at::kDouble);
  }
  partial.zero_();
  const double* xp = xc.data_ptr<double>();
  const double* vp = values.data_ptr<double>();
  double* buf = partial.data_ptr<double>();
  with_index_type(row_ptr.scalar_type(), [&]<typename I>() {
    const I* rp = row_ptr.data_ptr<I>();
    const I* ci = col_idx.data_ptr<I>();
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num(), team = omp_get_num_threads();
      double* out = buf + static_cast<int64_t>(t) * cols;
      for (int64_t i = rows * t / team; i < rows * (t + 1) / team; ++i) {
        for (I p = rp[i]; p < rp[i + 1]; ++p) out[ci[p]] += vp[p] * xp[i];   // y_j += a_ij x_i
      }
    }
  });
  if (threads == 1) {
    y.copy_(partial[0]);
  } else {
    at::sum_out(y, partial, at::IntArrayRef{0});                                   // the same reduction as partial.sum(0)
  }
}

at::Tensor CsrData::diagonal() const {
  if (matrix_free()) {   // the coefficient of offset 0 where a row stores it
    const StencilForm& s = plan->stencil();
    const auto it = std::find(s.offsets.begin(), s.offsets.end(), int64_t{0});
    at::Tensor d = at::zeros({rows}, at::kDouble);
    if (it == s.offsets.end()) return d;
    const int bit = static_cast<int>(it - s.offsets.begin());
    const double c = s.coeffs[bit];
    const uint8_t* m = s.mask.data_ptr<uint8_t>();
    double* dp = d.data_ptr<double>();
#pragma omp parallel for schedule(static) if (rows > 65536)
    for (int64_t i = 0; i < rows; ++i) {
      if (m[i] >> bit & 1u) dp[i] = c;
    }
    return d;
  }
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
  if (matrix_free()) {
    at::Tensor dense = at::zeros({rows, cols}, at::kDouble);
    double* dp = dense.data_ptr<double>();
    with_rows(*this, [&](const auto& view) {
      for (int64_t i = 0; i < rows; ++i) view.for_each(i, [&](int64_t j, double v) { dp[i * cols + j] += v; });
    });
    return dense;
  }
  at::Tensor dense = at::zeros({rows, cols}, values.options());
  at::Tensor row = csr_row_indices(row_ptr, nnz());
  return dense.index_put_({row, col_idx.to(at::kLong)}, values, /*accumulate=*/true);
}

CsrData csr_from_stencil(std::shared_ptr<const SpmvPlan> plan) {
  TESSERA_CHECK(plan && plan->uses_stencil() && plan->rows() == plan->cols(), InvalidInput,
                "csr_from_stencil: a square plan in stencil form");
  CsrData a;
  a.rows = plan->rows();
  a.cols = plan->cols();
  a.stored = plan->stencil().stored();
  a.plan = std::move(plan);
  return a;
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
  TESSERA_CHECK(!a.matrix_free(), Unsupported, "csr_transpose: not of a matrix-free operator");
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
  TESSERA_CHECK(!b0.matrix_free(), Unsupported, "csr_multiply: B matrix-free");
  if (a0.matrix_free()) {   // A's rows from its stencil form, in the same column order as its CSR
    CsrData out;
    with_index_type(b0.row_ptr.scalar_type(), [&]<typename I>() {
      const I *brp = b0.row_ptr.data_ptr<I>(), *bci = b0.col_idx.data_ptr<I>();
      const double* bva = b0.values.data_ptr<double>();
      with_rows(a0, [&](const auto& view) {
        out = gustavson<I>(a0.rows, b0.cols, [&](int64_t i, auto&& emit) {
          view.for_each(i, [&](int64_t k, double aik) {
            for (I q = brp[k]; q < brp[k + 1]; ++q) emit(bci[q], aik * bva[q]);   // a_ik b_kj
          });
        });
      });
    });
    return out;
  }
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

namespace tessera::sla::detail {

CsrData galerkin_product(const CsrData& a, const CsrData& p) {
  TESSERA_CHECK(a.rows == a.cols && a.cols == p.rows && !p.matrix_free(), DimensionMismatch,
                "galerkin_product: A ", a.rows, "x", a.cols, ", P ", p.rows, "x", p.cols);
  const int64_t fine = p.rows, coarse = p.cols;
  CsrData out;
  with_index_type(p.row_ptr.scalar_type(), [&]<typename I>() {
    const I* prp = p.row_ptr.data_ptr<I>();
    const I* pci = p.col_idx.data_ptr<I>();
    const double* pva = p.values.data_ptr<double>();
    // P^T's pattern: for each coarse column, the fine rows storing it, ascending (counting sort)
    std::vector<I> trp(static_cast<size_t>(coarse) + 1, 0);
    const int64_t pnnz = p.nnz();
    for (int64_t q = 0; q < pnnz; ++q) ++trp[pci[q] + 1];
    for (int64_t c = 0; c < coarse; ++c) trp[c + 1] += trp[c];
    at::Tensor tci_t = at::empty({pnnz}, p.col_idx.options());
    I* tci = tci_t.data_ptr<I>();
    {
      std::vector<I> next(trp.begin(), trp.end() - 1);
      for (int64_t k = 0; k < fine; ++k) {
        for (I q = prp[k]; q < prp[k + 1]; ++q) tci[next[pci[q]]++] = static_cast<I>(k);
      }
    }
    with_rows(a, [&](const auto& arows) {
      // pass 1: the columns of row I of A_c, those of the rows of P reached from P^T's row I
      // through A (each distinct column counted once by a marker)
      std::vector<int64_t> counts(static_cast<size_t>(coarse) + 1, 0);
#pragma omp parallel
      {
        std::vector<int64_t> marker(coarse, -1);
#pragma omp for schedule(dynamic, 512)
        for (int64_t ci = 0; ci < coarse; ++ci) {
          int64_t c = 0;
          for (I t = trp[ci]; t < trp[ci + 1]; ++t) {
            arows.for_each(tci[t], [&](int64_t m, double) {
              for (I q = prp[m]; q < prp[m + 1]; ++q) {
                if (marker[pci[q]] != ci) { marker[pci[q]] = ci; ++c; }
              }
            });
          }
          counts[ci + 1] = c;
        }
      }
      at::Tensor rp, cit, va;
      std::tie(rp, cit, va) = csr_arrays<I>(counts, coarse, "galerkin_product");
      I* cip = cit.data_ptr<I>();
      double* vap = va.data_ptr<double>();
      // pass 2: row I = sum over k ascending in P^T's row I of P(k, I) times row k of A P, each
      // row of A P summed as csr_multiply sums it (first term from 0.0, then in A's column
      // order), each sum of row I as gustavson adds (per column, in k order): the same bits
#pragma omp parallel
      {
        std::vector<int64_t> marker(coarse, -1);
        std::vector<double> acc(coarse, 0.0);
        std::vector<std::pair<int64_t, double>> ap;                         // row k of A P
        std::vector<int32_t> slot(coarse, -1);                               // column j's place in ap
#pragma omp for schedule(dynamic, 512)
        for (int64_t ci = 0; ci < coarse; ++ci) {
          I* row_cols = cip + counts[ci];
          int64_t c = 0;
          for (I t = trp[ci]; t < trp[ci + 1]; ++t) {
            const int64_t k = tci[t];
            const I* hit = std::lower_bound(pci + prp[k], pci + prp[k + 1], static_cast<I>(ci));
            const double pki = pva[hit - pci];                              // P(k, I) = P^T(I, k)
            ap.clear();
            arows.for_each(k, [&](int64_t m, double akm) {
              for (I q = prp[m]; q < prp[m + 1]; ++q) {
                const int64_t j = pci[q];
                const double v = akm * pva[q];                               // a_km p_mj
                if (slot[j] < 0) {
                  slot[j] = static_cast<int32_t>(ap.size());
                  ap.emplace_back(j, 0.0 + v);
                } else {
                  ap[slot[j]].second += v;
                }
              }
            });
            for (const auto& term : ap) slot[term.first] = -1;
            for (const auto& [j, v] : ap) {                                 // A_c(I, j) += P^T(I, k) (A P)(k, j)
              if (marker[j] != ci) { marker[j] = ci; acc[j] = 0.0; row_cols[c++] = static_cast<I>(j); }
              acc[j] += pki * v;
            }
          }
          std::sort(row_cols, row_cols + c);
          for (int64_t q = 0; q < c; ++q) vap[counts[ci] + q] = acc[row_cols[q]];
        }
      }
      out = CsrData{rp, cit, va, coarse, coarse, nullptr};
    });
  });
  return out;
}

}  // namespace tessera::sla::detail
