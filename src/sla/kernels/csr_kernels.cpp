// OpenMP CSR kernels (CPU) and their ATen reference versions (any device).

#include "sla/kernels/csr_kernels.h"

#include <ATen/ATen.h>

#include "sla/kernels/spmv.h"
#include "tessera/core/error.h"

namespace tessera::sla::detail {
namespace {

/// Below this many multiply-adds a kernel runs on one thread: waking the team costs more.
constexpr int64_t kParallelWork = 1 << 16;

template <typename index_t, typename scalar_t>
void spmm_cpu(const at::Tensor& row_ptr, const at::Tensor& col_idx, const at::Tensor& perm,
              const at::Tensor& values, const at::Tensor& x, at::Tensor& y) {
  const index_t* rp = row_ptr.data_ptr<index_t>();
  const index_t* ci = col_idx.data_ptr<index_t>();
  const int64_t* pm = perm.defined() ? perm.data_ptr<int64_t>() : nullptr;
  const scalar_t* v = values.data_ptr<scalar_t>();
  const scalar_t* xp = x.data_ptr<scalar_t>();
  scalar_t* yp = y.data_ptr<scalar_t>();
  const int64_t batch = y.size(0), rows = y.size(1), k = y.size(2);
  const int64_t nnz = col_idx.size(0), xrows = x.size(1);
  const int64_t x_stride = x.size(0) == 1 ? 0 : xrows * k;
  const bool parallel = batch * nnz * k >= kParallelWork;
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < rows; ++i) {
      const scalar_t* vb = v + b * nnz;
      const scalar_t* xb = xp + b * x_stride;
      scalar_t* yi = yp + (b * rows + i) * k;
      for (int64_t c = 0; c < k; ++c) yi[c] = 0;
      for (int64_t p = rp[i]; p < rp[i + 1]; ++p) {
        const scalar_t a = vb[pm ? pm[p] : p];  // a = A(i, col(p))
        const scalar_t* xj = xb + static_cast<int64_t>(ci[p]) * k;
        for (int64_t c = 0; c < k; ++c) yi[c] += a * xj[c];  // y(i, c) += A(i, j) x(j, c)
      }
    }
  }
}

template <typename index_t, typename scalar_t>
void sampled_dot_cpu(const at::Tensor& row_ptr, const at::Tensor& col_idx, const at::Tensor& left,
                     const at::Tensor& right, at::Tensor& out) {
  const index_t* rp = row_ptr.data_ptr<index_t>();
  const index_t* ci = col_idx.data_ptr<index_t>();
  const scalar_t* lp = left.data_ptr<scalar_t>();
  const scalar_t* rpv = right.data_ptr<scalar_t>();
  scalar_t* op = out.data_ptr<scalar_t>();
  const int64_t batch = out.size(0), nnz = out.size(1), rows = row_ptr.size(0) - 1;
  const int64_t k = left.size(2);
  const int64_t l_stride = left.size(0) == 1 ? 0 : left.size(1) * k;
  const int64_t r_stride = right.size(0) == 1 ? 0 : right.size(1) * k;
  const bool parallel = batch * nnz * k >= kParallelWork;
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < rows; ++i) {
      const scalar_t* li = lp + b * l_stride + i * k;
      for (int64_t p = rp[i]; p < rp[i + 1]; ++p) {
        const scalar_t* rj = rpv + b * r_stride + static_cast<int64_t>(ci[p]) * k;
        scalar_t s = 0;
        for (int64_t c = 0; c < k; ++c) s += li[c] * rj[c];  // s = <left(i, :), right(j, :)>
        op[b * nnz + p] = s;
      }
    }
  }
}

void check_operands(const at::Tensor& values, const at::Tensor& dense, const char* what) {
  TESSERA_CHECK(values.dim() == 2 && dense.dim() == 3, InvalidInput,
                "csr kernel expects values [B, nnz] and ", what, " [B, n, k]");
  TESSERA_CHECK(values.scalar_type() == dense.scalar_type(), InvalidInput,
                "csr kernel: values and ", what, " must have the same dtype");
}

}  // namespace

at::Tensor csr_row_indices(const at::Tensor& row_ptr, int64_t nnz) {
  at::Tensor counts = (row_ptr.narrow(0, 1, row_ptr.size(0) - 1) - row_ptr.narrow(0, 0, row_ptr.size(0) - 1))
                          .to(at::kLong);
  at::Tensor rows = at::arange(row_ptr.size(0) - 1, row_ptr.options().dtype(at::kLong));
  return at::repeat_interleave(rows, counts, /*dim=*/0, /*output_size=*/nnz);
}

at::Tensor csr_spmm_reference(const at::Tensor& row_ptr, const at::Tensor& col_idx, const at::Tensor& perm,
                              const at::Tensor& values, const at::Tensor& x, int64_t rows) {
  check_operands(values, x, "x");
  const int64_t nnz = col_idx.size(0);
  at::Tensor v = perm.defined() ? values.index_select(1, perm) : values;      // v(p) = A(row(p), col(p))
  at::Tensor row = csr_row_indices(row_ptr, nnz);
  at::Tensor xj = x.index_select(1, col_idx.to(at::kLong));                   // x(col(p), :)
  at::Tensor prod = v.unsqueeze(-1) * xj;                                      // A(i, j) x(j, :)
  const int64_t batch = std::max(values.size(0), x.size(0));
  at::Tensor y = at::zeros({batch, rows, x.size(2)}, x.options());
  return y.index_add(1, row, prod.expand({batch, nnz, x.size(2)}));           // y(i) = sum_j A(i, j) x(j)
}

at::Tensor csr_sampled_dot_reference(const at::Tensor& row_ptr, const at::Tensor& col_idx,
                                     const at::Tensor& left, const at::Tensor& right) {
  at::Tensor row = csr_row_indices(row_ptr, col_idx.size(0));
  at::Tensor li = left.index_select(1, row);                                   // left(row(p), :)
  at::Tensor rj = right.index_select(1, col_idx.to(at::kLong));               // right(col(p), :)
  return (li * rj).sum(-1);
}

at::Tensor csr_spmm(const at::Tensor& row_ptr, const at::Tensor& col_idx, const at::Tensor& perm,
                    const at::Tensor& values, const at::Tensor& x, int64_t rows) {
  check_operands(values, x, "x");
  if (!values.is_cpu()) return csr_spmm_reference(row_ptr, col_idx, perm, values, x, rows);
  TESSERA_CHECK(x.size(0) == 1 || x.size(0) == values.size(0), DimensionMismatch,
                "csr_spmm: x batch ", x.size(0), " vs values batch ", values.size(0));
  at::Tensor v = values.contiguous(), xc = x.contiguous();
  at::Tensor y = at::empty({values.size(0), rows, x.size(2)}, x.options());
  if (x.size(2) == 1 && !perm.defined()) {   // one vector: the row-blocked kernel (spmv.h)
    at::Tensor y2 = y.view({values.size(0), rows});
    csr_spmv_batched(row_ptr, col_idx, v, xc.view({xc.size(0), xc.size(1)}), y2);
    return y;
  }
  AT_DISPATCH_FLOATING_TYPES(v.scalar_type(), "csr_spmm", [&] {
    if (row_ptr.scalar_type() == at::kInt) {
      spmm_cpu<int32_t, scalar_t>(row_ptr, col_idx, perm, v, xc, y);
    } else {
      spmm_cpu<int64_t, scalar_t>(row_ptr, col_idx, perm, v, xc, y);
    }
  });
  return y;
}

at::Tensor csr_sampled_dot(const at::Tensor& row_ptr, const at::Tensor& col_idx, const at::Tensor& left,
                           const at::Tensor& right) {
  TESSERA_CHECK(left.dim() == 3 && right.dim() == 3 && left.size(2) == right.size(2), InvalidInput,
                "csr_sampled_dot expects left [B, rows, k] and right [B, cols, k]");
  if (!left.is_cpu()) return csr_sampled_dot_reference(row_ptr, col_idx, left, right);
  const int64_t batch = std::max(left.size(0), right.size(0));
  at::Tensor l = left.contiguous(), r = right.contiguous();
  at::Tensor out = at::empty({batch, col_idx.size(0)}, left.options());
  AT_DISPATCH_FLOATING_TYPES(l.scalar_type(), "csr_sampled_dot", [&] {
    if (row_ptr.scalar_type() == at::kInt) {
      sampled_dot_cpu<int32_t, scalar_t>(row_ptr, col_idx, l, r, out);
    } else {
      sampled_dot_cpu<int64_t, scalar_t>(row_ptr, col_idx, l, r, out);
    }
  });
  return out;
}

}  // namespace tessera::sla::detail
