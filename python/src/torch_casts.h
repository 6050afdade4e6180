#pragma once
/// @file torch_casts.h
/// PyTorch's pybind11 casters (torch.Tensor <-> at::Tensor without a copy, sharing the
/// autograd graph) and the torch.dtype argument of the bindings.

#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include "tessera/core/error.h"

namespace tessera::python {

namespace py = pybind11;

/// A torch.dtype (float32 or float64) or None (-> `fallback`).
inline at::ScalarType scalar_type_from(const py::handle& dtype, at::ScalarType fallback) {
  if (dtype.is_none()) return fallback;
  TESSERA_CHECK(THPDtype_Check(dtype.ptr()), InvalidInput, "dtype must be a torch.dtype, got ",
                std::string(py::str(dtype)));
  at::ScalarType t = reinterpret_cast<THPDtype*>(dtype.ptr())->scalar_type;
  TESSERA_CHECK(t == at::kFloat || t == at::kDouble, Unsupported, "dtype must be torch.float32 or torch.float64, got ",
                std::string(py::str(dtype)));
  return t;
}

}  // namespace tessera::python
