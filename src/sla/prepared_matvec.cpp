// PreparedMatvec: the public face of detail::SpmvPlan.

#include "tessera/sla/prepared_matvec.h"

#include <ATen/ATen.h>

#include "sla/kernels/spmv.h"
#include "tessera/core/error.h"

namespace tessera::sla {

PreparedMatvec::PreparedMatvec(const SparseTensor& a, SpmvFormat format, int threads, int64_t batch_index) {
  TESSERA_CHECK(a.values().is_cpu(), Unsupported, "PreparedMatvec: CPU matrices only");
  TESSERA_CHECK(batch_index >= 0 && batch_index < a.batch_size(), InvalidInput, "PreparedMatvec: batch index ",
                batch_index, " out of range [0, ", a.batch_size(), ")");
  at::Tensor v = a.values().detach().reshape({a.batch_size(), a.nnz()})[batch_index].contiguous();
  at::Tensor rp = a.row_ptr(), ci = a.col_idx();
  SpmvFormat kernel = format;
  if (format == SpmvFormat::CsrFloat32Values) {
    v = v.to(at::kFloat);                       // half the value bytes; float64 accumulation
    kernel = SpmvFormat::Csr;
  } else {
    v = v.to(at::kDouble);
  }
  if (format == SpmvFormat::CsrInt64) {
    rp = rp.to(at::kLong);
    ci = ci.to(at::kLong);
    kernel = SpmvFormat::Csr;
  }
  plan_ = std::make_shared<const detail::SpmvPlan>(rp, ci, v, a.rows(), a.cols(), kernel, threads);
}

void PreparedMatvec::apply(const at::Tensor& x, at::Tensor& y) const { plan_->apply(x, y); }
double PreparedMatvec::apply_dot(const at::Tensor& x, at::Tensor& y) const { return plan_->apply_dot(x, y); }
int64_t PreparedMatvec::rows() const { return plan_->rows(); }
int64_t PreparedMatvec::cols() const { return plan_->cols(); }
int PreparedMatvec::threads() const { return plan_->threads(); }
const char* PreparedMatvec::format_name() const { return plan_->format_name(); }
double PreparedMatvec::bytes_per_apply() const { return plan_->bytes_per_apply(); }

}  // namespace tessera::sla
