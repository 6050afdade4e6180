// dsolve_operator: solve_operator across ranks. The user's operator acts on this rank's rows;
// the Krylov loops and the autograd node are solve_operator's, with inner products summed
// over the communicator's ranks.

#include "tessera/sla/dist/dsolve_operator.h"

#include <ATen/ATen.h>

#include <memory>

#include "sla/autograd/operator_solve_function.h"
#include "sla/dist/distributed_space.h"
#include "sla/operator/operator_problem.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"

namespace tessera::sla {

std::pair<at::Tensor, SolveInfo> dsolve_operator(const UserOperator& op, const at::Tensor& b,
                                                 const std::vector<at::Tensor>& params,
                                                 const std::shared_ptr<dist::Communicator>& comm,
                                                 const OperatorSolveOptions& options) {
  const char* name = "dsolve_operator";
  TESSERA_CHECK(comm != nullptr, InvalidInput, name, ": no communicator");
  OperatorSolveOptions resolved = detail::resolve_operator_options(op, b, options, name);
  at::Tensor rows = at::full({1}, op.rows, at::kLong);
  comm->all_reduce(rows, dist::ReduceOp::Sum);                       // n = sum_r rows_r
  at::Tensor columns = at::full({2}, b.dim() == 1 ? int64_t{1} : b.size(1), at::kLong);
  columns[1] = -columns[1];
  comm->all_reduce(columns, dist::ReduceOp::Max);                    // every rank solves as many columns
  TESSERA_CHECK(columns[0].item<int64_t>() == -columns[1].item<int64_t>(), DimensionMismatch, name,
                ": the ranks' b have different numbers of columns");
  auto problem = std::make_shared<detail::OperatorProblem>(
      op, params, std::move(resolved), detail::distributed_krylov_space(comm, rows.item<int64_t>()), name);
  SolveInfo info;
  at::Tensor x = detail::operator_solve_autograd(params, b, problem, info);
  return {x, info};
}

}  // namespace tessera::sla
