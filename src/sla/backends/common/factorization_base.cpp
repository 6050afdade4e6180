#include "sla/backends/common/factorization_base.h"

#include <ATen/ATen.h>

#include "sla/backends/common/condition.h"
#include "sla/backends/common/csr_checks.h"
#include "tessera/core/error.h"

namespace tessera::sla::backends::detail {

at::Tensor FactorizationBase::solve(const at::Tensor& b, bool transpose) const {
  TESSERA_CHECK(status_ == SolveStatus::Converged, InvalidInput, backend_,
                ": cannot solve with a failed ", to_string(method_), " factorisation (",
                to_string(status_), "): ", message_);
  at::Tensor columns = rhs_to_columns(b, n_, backend_);  // [k, n], column j contiguous
  solve_in_place(columns.data_ptr<double>(), columns.size(0), transpose);
  return columns_to_rhs(columns, b);
}

void FactorizationBase::check_condition(const CsrMatrix& a) {
  std::string message;
  const InPlaceSolve solve = [this](double* x, bool transpose) { solve_in_place(x, 1, transpose); };
  const SolveStatus status = status_from_rcond(a, solve, backend_, message);
  if (status != SolveStatus::Converged) set_failure(status, std::move(message));
}

}  // namespace tessera::sla::backends::detail
