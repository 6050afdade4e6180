#include "sla/backends/common/csr_checks.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tessera/core/error.h"

namespace tessera::sla::backends::detail {
namespace {

void check_index_tensor(const at::Tensor& t, const char* name, int64_t size, const std::string& who) {
  TESSERA_CHECK(t.defined(), InvalidInput, who, ": CSR ", name, " is undefined");
  TESSERA_CHECK(t.device().is_cpu(), Unsupported, who, ": CSR ", name, " must be on the CPU, got ",
                t.device());
  TESSERA_CHECK(t.scalar_type() == at::kLong, InvalidInput, who, ": CSR ", name,
                " must be int64, got ", t.scalar_type());
  TESSERA_CHECK(t.dim() == 1 && t.numel() == size, DimensionMismatch, who, ": CSR ", name,
                " must be 1-D with ", size, " entries, got shape ", t.sizes());
  TESSERA_CHECK(t.is_contiguous(), InvalidInput, who, ": CSR ", name, " must be contiguous");
}

}  // namespace

void check_csr(const CsrMatrix& a, const std::string& who) {
  TESSERA_CHECK(a.rows == a.cols, DimensionMismatch, who, ": matrix must be square, got ", a.rows,
                " x ", a.cols);
  TESSERA_CHECK(a.rows > 0, InvalidInput, who, ": matrix is empty (", a.rows, " x ", a.cols, ")");
  check_index_tensor(a.row_ptr, "row_ptr", a.rows + 1, who);
  const int64_t* rp = a.row_ptr.data_ptr<int64_t>();
  const int64_t nnz = rp[a.rows];
  TESSERA_CHECK(rp[0] == 0 && nnz >= 0, InvalidInput, who, ": CSR row_ptr must start at 0, got ",
                rp[0], " .. ", nnz);
  check_index_tensor(a.col_idx, "col_idx", nnz, who);
  TESSERA_CHECK(a.values.defined(), InvalidInput, who, ": CSR values are undefined");
  TESSERA_CHECK(a.values.device().is_cpu(), Unsupported, who, ": CSR values must be on the CPU, got ",
                a.values.device());
  TESSERA_CHECK(a.values.scalar_type() == at::kDouble, Unsupported, who,
                ": CSR values must be float64, got ", a.values.scalar_type());
  TESSERA_CHECK(a.values.dim() == 1 && a.values.numel() == nnz && a.values.is_contiguous(),
                DimensionMismatch, who, ": CSR values must be contiguous 1-D with nnz = ", nnz,
                " entries, got shape ", a.values.sizes());
  const int64_t* ci = a.col_idx.data_ptr<int64_t>();
  const double* v = a.values.data_ptr<double>();
  for (int64_t i = 0; i < a.rows; ++i) {
    TESSERA_CHECK(rp[i] <= rp[i + 1], InvalidInput, who, ": CSR row_ptr decreases at row ", i);
    for (int64_t p = rp[i]; p < rp[i + 1]; ++p) {
      TESSERA_CHECK(ci[p] >= 0 && ci[p] < a.cols, InvalidInput, who, ": column index ", ci[p],
                    " out of range [0, ", a.cols, ") in row ", i);
      TESSERA_CHECK(p == rp[i] || ci[p] > ci[p - 1], InvalidInput, who,
                    ": column indices of row ", i, " are not sorted and unique");
      TESSERA_CHECK(std::isfinite(v[p]), InvalidInput, who, ": non-finite value ", v[p], " at (",
                    i, ", ", ci[p], ")");
    }
  }
}

void check_symmetric(const CsrMatrix& a, const std::string& who) {
  const int64_t* rp = a.row_ptr.data_ptr<int64_t>();
  const int64_t* ci = a.col_idx.data_ptr<int64_t>();
  const double* v = a.values.data_ptr<double>();
  double max_abs = 0.0;
  for (int64_t p = 0; p < rp[a.rows]; ++p) max_abs = std::max(max_abs, std::abs(v[p]));
  const double tol = 1e-12 * max_abs;
  // a_ji, or 0 when (j, i) is not stored: binary search in the sorted row j
  auto lookup = [&](int64_t j, int64_t i) {
    const int64_t* first = ci + rp[j];
    const int64_t* last = ci + rp[j + 1];
    const int64_t* it = std::lower_bound(first, last, i);
    return (it != last && *it == i) ? v[it - ci] : 0.0;
  };
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t p = rp[i]; p < rp[i + 1]; ++p) {
      const int64_t j = ci[p];
      if (j <= i) continue;  // each pair once, from the strict upper triangle ...
      const double aji = lookup(j, i);
      TESSERA_CHECK(std::abs(v[p] - aji) <= tol, InvalidInput, who,
                    ": Cholesky/LDLT need a symmetric matrix, but A(", i, ", ", j, ") = ", v[p],
                    " and A(", j, ", ", i, ") = ", aji);
    }
    for (int64_t p = rp[i]; p < rp[i + 1]; ++p) {
      const int64_t j = ci[p];
      if (j >= i) continue;  // ... and lower entries whose mirror is not stored
      TESSERA_CHECK(std::abs(v[p] - lookup(j, i)) <= tol, InvalidInput, who,
                    ": Cholesky/LDLT need a symmetric matrix, but A(", i, ", ", j, ") = ", v[p],
                    " and A(", j, ", ", i, ") = ", lookup(j, i));
    }
  }
}

at::Tensor rhs_to_columns(const at::Tensor& b, int64_t n, const std::string& who) {
  TESSERA_CHECK(b.defined(), InvalidInput, who, ": right-hand side is undefined");
  TESSERA_CHECK(b.device().is_cpu(), Unsupported, who, ": right-hand side must be on the CPU, got ",
                b.device());
  TESSERA_CHECK(b.scalar_type() == at::kDouble, Unsupported, who,
                ": right-hand side must be float64, got ", b.scalar_type());
  TESSERA_CHECK((b.dim() == 1 || b.dim() == 2) && b.size(0) == n, DimensionMismatch, who,
                ": right-hand side must be [", n, "] or [", n, ", k], got ", b.sizes());
  TESSERA_CHECK(at::isfinite(b).all().item<bool>(), InvalidInput, who,
                ": right-hand side has non-finite entries");
  // [n] -> [1, n]; [n, k] -> [k, n] (column j contiguous)
  at::Tensor columns = b.dim() == 1 ? b.reshape({1, n}) : b.t();
  return columns.contiguous().clone();
}

at::Tensor columns_to_rhs(const at::Tensor& columns, const at::Tensor& b) {
  if (b.dim() == 1) return columns.reshape({b.size(0)});
  return columns.t().contiguous();
}

double norm1(const CsrMatrix& a) {
  const int64_t* rp = a.row_ptr.data_ptr<int64_t>();
  const int64_t* ci = a.col_idx.data_ptr<int64_t>();
  const double* v = a.values.data_ptr<double>();
  std::vector<double> column_sums(static_cast<size_t>(a.cols), 0.0);
  for (int64_t p = 0; p < rp[a.rows]; ++p) column_sums[ci[p]] += std::abs(v[p]);  // sum_i |a_ij|
  return *std::max_element(column_sums.begin(), column_sums.end());
}

}  // namespace tessera::sla::backends::detail
