#pragma once
/// @file bindings.h
/// The parts of the tessera._C extension, one translation unit each. Only the binding
/// units include PyTorch's pybind11 casters (torch_casts.h).

#include <pybind11/pybind11.h>

namespace tessera::python {

namespace py = pybind11;

/// tessera._C.sla: SparseTensor, solve, eigsh, determinants, nonlinear_solve, readers.
void bind_sla(py::module_& m);
/// tessera._C.sla (distributed): DSparseTensor and the world communicator.
void bind_dist(py::module_& m);
/// tessera._C.lirpa: Graph (ONNX), compute_bounds, verify.
void bind_lirpa(py::module_& m);

}  // namespace tessera::python
