/// @file module.cpp
/// tessera._C: the extension module. Maps tessera's C++ exceptions to Python ones with the
/// C++ message: InvalidInput, DimensionMismatch, ParseError -> ValueError subclasses;
/// Unsupported, NotCompiled -> NotImplementedError subclasses; every other tessera::Error
/// (DistributedError, ResourceExhausted, ...) -> a RuntimeError subclass. All of them also
/// derive from tessera.TesseraError. Numerical outcomes are never exceptions: they are in
/// the returned info objects.

#include <Python.h>

#include "bindings.h"
#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/core/threads.h"
#include "tessera/core/version.h"

namespace tessera::python {
namespace {

struct ErrorTypes {
  PyObject* base = nullptr;               // TesseraError(Exception)
  PyObject* invalid_input = nullptr;      // (TesseraError, ValueError)
  PyObject* dimension_mismatch = nullptr; // (TesseraError, ValueError)
  PyObject* parse_error = nullptr;        // (TesseraError, ValueError)
  PyObject* unsupported = nullptr;        // (TesseraError, NotImplementedError)
  PyObject* not_compiled = nullptr;       // (TesseraError, NotImplementedError)
  PyObject* distributed = nullptr;        // (TesseraError, RuntimeError)
  PyObject* resource_exhausted = nullptr; // (TesseraError, RuntimeError)
  PyObject* runtime = nullptr;            // (TesseraError, RuntimeError): other kinds
};

ErrorTypes errors;

PyObject* new_error(py::module_& m, const char* name, PyObject* base, PyObject* builtin, const char* doc) {
  PyObject* bases = builtin ? PyTuple_Pack(2, base, builtin) : PyTuple_Pack(1, base);
  std::string qualified = std::string("tessera.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  Py_DECREF(bases);
  if (!type) throw py::error_already_set();
  m.add_object(name, py::handle(type));  // the module holds one reference for good
  return type;
}

void register_errors(py::module_& m) {
  errors.base = new_error(m, "TesseraError", PyExc_Exception, nullptr,
                          "Base of every exception raised by tessera's C++ code.");
  errors.invalid_input = new_error(m, "InvalidInput", errors.base, PyExc_ValueError,
                                   "A value passed is not acceptable (NaN, bad size, empty matrix...).");
  errors.dimension_mismatch =
      new_error(m, "DimensionMismatch", errors.base, PyExc_ValueError, "Shapes of operands do not agree.");
  errors.parse_error = new_error(m, "ParseError", errors.base, PyExc_ValueError,
                                 "A file (MatrixMarket, ONNX, VNN-LIB, YAML) is malformed.");
  errors.unsupported = new_error(m, "Unsupported", errors.base, PyExc_NotImplementedError,
                                 "The request is valid but not supported (operator, dtype, method).");
  errors.not_compiled = new_error(m, "NotCompiled", errors.base, PyExc_NotImplementedError,
                                  "A backend or feature named explicitly is not compiled into this build.");
  errors.distributed = new_error(m, "DistributedError", errors.base, PyExc_RuntimeError,
                                 "A collective or launch problem across processes.");
  errors.resource_exhausted = new_error(m, "ResourceExhausted", errors.base, PyExc_RuntimeError,
                                        "An allocation would exceed the memory cap.");
  errors.runtime = new_error(m, "TesseraRuntimeError", errors.base, PyExc_RuntimeError,
                             "Any other error raised by tessera's C++ code.");

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tessera::InvalidInput& e) {
      PyErr_SetString(errors.invalid_input, e.what());
    } catch (const tessera::DimensionMismatch& e) {
      PyErr_SetString(errors.dimension_mismatch, e.what());
    } catch (const tessera::ParseError& e) {
      PyErr_SetString(errors.parse_error, e.what());
    } catch (const tessera::Unsupported& e) {
      PyErr_SetString(errors.unsupported, e.what());
    } catch (const tessera::NotCompiled& e) {
      PyErr_SetString(errors.not_compiled, e.what());
    } catch (const tessera::DistributedError& e) {
      PyErr_SetString(errors.distributed, e.what());
    } catch (const tessera::ResourceExhausted& e) {
      PyErr_SetString(errors.resource_exhausted, e.what());
    } catch (const tessera::Error& e) {
      PyErr_SetString(errors.runtime, e.what());
    }
  });
}

/// _C.set_threads(threads): the command line's rule (threads > 0; else TESSERA_THREADS, one
/// per rank under MPI, the cores the load leaves free now, every core), applied to ATen,
/// OpenMP and the BLAS; the config as a dict.
pybind11::dict set_threads(int threads) {
  const core::ThreadConfig c = core::apply_threads(core::resolve_threads(threads, core::busy_elsewhere()));
  pybind11::dict d;
  d["threads"] = c.threads;
  d["blas_threads"] = c.blas_threads;
  d["source"] = core::to_string(c.source);
  d["threads_from"] = core::describe(c);
  d["cores"] = c.cores;
  d["busy"] = c.busy_at_start;
  return d;
}

}  // namespace
}  // namespace tessera::python

PYBIND11_MODULE(_C, m) {
  namespace tp = tessera::python;
  m.doc() = "tessera's C++ library (sparse linear algebra and bound propagation) for PyTorch.";
  tp::register_errors(m);
  m.attr("__version__") = tessera::core::version();
  m.attr("__torch_version__") = tessera::core::torch_version();
  m.def("set_threads", &tp::set_threads, pybind11::arg("threads") = 0,
        "Sets the thread count of ATen, OpenMP and the BLAS by the command line's rule; returns the config.");
  pybind11::module_ sla = m.def_submodule("sla", "Differentiable sparse linear algebra (C++ bindings).");
  tp::bind_sla(sla);
  tp::bind_dist(sla);
  tp::bind_operator(sla);
  pybind11::module_ lirpa = m.def_submodule("lirpa", "Bound propagation and verification (C++ bindings).");
  tp::bind_lirpa(lirpa);
}
