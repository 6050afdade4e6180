/// @file operator_bindings.cpp
/// tessera._C.sla: solve_operator and dsolve_operator, the solves with a user linear operator
/// given as Python callables. The C++ side runs the Krylov loops and the autograd engine
/// (the adjoint solve, the vector-Jacobian products through the callables) without the GIL;
/// each call of a callable takes it back.

#include "torch_casts.h"  // first: it includes Python.h

#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/sla/dist/dsolve_operator.h"
#include "tessera/sla/solve_operator.h"

namespace tessera::python {
namespace {

using namespace tessera::sla;

/// A Python callable `hook(r)` as a C++ PreconditionerFn (empty for None); held and called
/// under the GIL as wrap_residual's functions are.
PreconditionerFn wrap_hook(const py::object& hook, const char* what) {
  if (hook.is_none()) return {};
  std::shared_ptr<py::object> fn(new py::object(hook), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
  return [fn, what](const at::Tensor& r) -> at::Tensor {
    py::gil_scoped_acquire gil;
    py::object z = (*fn)(r);
    TESSERA_CHECK(THPVariable_Check(z.ptr()), InvalidInput, "the ", what, " must return a torch.Tensor, got ",
                  std::string(py::str(z.get_type())));
    return z.cast<at::Tensor>();
  };
}

UserOperator make_operator(const py::function& apply, const py::object& apply_transposed, bool symmetric,
                           int64_t rows) {
  UserOperator op;
  op.apply = wrap_residual(apply);
  if (!apply_transposed.is_none()) op.apply_transposed = wrap_residual(apply_transposed.cast<py::function>());
  op.symmetric = symmetric;
  op.rows = rows;
  return op;
}

OperatorSolveOptions make_options(const std::string& method, double rtol, double atol, int64_t maxiter,
                                  int64_t gmres_restart, const py::object& preconditioner,
                                  const py::object& preconditioner_transposed) {
  OperatorSolveOptions o;
  o.method = parse_method(method);
  o.rtol = rtol;
  o.atol = atol;
  o.maxiter = maxiter;
  o.gmres_restart = gmres_restart;
  o.preconditioner = wrap_hook(preconditioner, "preconditioner");
  o.preconditioner_transposed = wrap_hook(preconditioner_transposed, "transposed preconditioner");
  return o;
}

/// Binds `name(apply, apply_transposed, symmetric, b, params, method, rtol, atol, maxiter,
/// gmres_restart, preconditioner, preconditioner_transposed)`: the operator and options built
/// from the Python arguments, then `solve(op, b, params, options)` (which releases the GIL).
template <class Solve>
void def_operator_solve(py::module_& m, const char* name, Solve solve) {
  m.def(
      name,
      [solve](const py::function& apply, const py::object& apply_transposed, bool symmetric, const at::Tensor& b,
              const std::vector<at::Tensor>& params, const std::string& method, double rtol, double atol,
              int64_t maxiter, int64_t gmres_restart, const py::object& preconditioner,
              const py::object& preconditioner_transposed) {
        const UserOperator op = make_operator(apply, apply_transposed, symmetric, b.dim() > 0 ? b.size(0) : 0);
        const OperatorSolveOptions o =
            make_options(method, rtol, atol, maxiter, gmres_restart, preconditioner, preconditioner_transposed);
        return solve(op, b, params, o);
      },
      py::arg("apply"), py::arg("apply_transposed"), py::arg("symmetric"), py::arg("b"), py::arg("params"),
      py::arg("method"), py::arg("rtol"), py::arg("atol"), py::arg("maxiter"), py::arg("gmres_restart"),
      py::arg("preconditioner"), py::arg("preconditioner_transposed"));
}

}  // namespace

void bind_operator(py::module_& m) {
  def_operator_solve(m, "solve_operator",
                     [](const UserOperator& op, const at::Tensor& b, const std::vector<at::Tensor>& params,
                        const OperatorSolveOptions& o) {
                       py::gil_scoped_release release;
                       return solve_operator(op, b, params, o);
                     });
  def_operator_solve(m, "dsolve_operator",
                     [](const UserOperator& op, const at::Tensor& b, const std::vector<at::Tensor>& params,
                        const OperatorSolveOptions& o) {
                       auto comm = dist::world();
                       py::gil_scoped_release release;
                       return dsolve_operator(op, b, params, comm, o);
                     });
}

}  // namespace tessera::python
