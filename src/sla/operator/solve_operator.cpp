// solve_operator(op, b, params, options): checks, then the differentiable Krylov solve on one process.

#include "tessera/sla/solve_operator.h"

#include <memory>

#include "sla/autograd/operator_solve_function.h"
#include "sla/operator/operator_problem.h"

namespace tessera::sla {

std::pair<at::Tensor, SolveInfo> solve_operator(const UserOperator& op, const at::Tensor& b,
                                                const std::vector<at::Tensor>& params,
                                                const OperatorSolveOptions& options) {
  const char* name = "solve_operator";
  OperatorSolveOptions resolved = detail::resolve_operator_options(op, b, options, name);
  auto problem = std::make_shared<detail::OperatorProblem>(op, params, std::move(resolved),
                                                           detail::KrylovSpace::local(op.rows), name);
  SolveInfo info;
  at::Tensor x = detail::operator_solve_autograd(params, b, problem, info);
  return {x, info};
}

}  // namespace tessera::sla
