#pragma once
/// @file bindings.h
/// The parts of the tessera._C extension, one translation unit each. Only the binding
/// units include PyTorch's pybind11 casters (torch_casts.h).

#include <pybind11/pybind11.h>

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

namespace tessera::python {

namespace py = pybind11;

/// tessera._C.sla: SparseTensor, solve, eigsh, determinants, nonlinear_solve, readers.
void bind_sla(py::module_& m);
/// tessera._C.sla (distributed): DSparseTensor and the world communicator.
void bind_dist(py::module_& m);
/// A Python callable `residual(u, params_list)` as a C++ ResidualFn. The C++ side keeps
/// copies in the autograd graph, possibly released without the GIL: the Python object is
/// held through a deleter that takes the GIL, and each call takes it back.
std::function<at::Tensor(const at::Tensor&, const std::vector<at::Tensor>&)> wrap_residual(const py::function& residual);

/// tessera._C.sla: solve_operator and dsolve_operator (user linear operators as callables).
void bind_operator(py::module_& m);

/// tessera._C.lirpa: Graph (ONNX), compute_bounds, verify.
void bind_lirpa(py::module_& m);

}  // namespace tessera::python
