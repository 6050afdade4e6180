/// @file sla_bindings.cpp
/// tessera._C.sla: the C++ sparse linear algebra for Python. Tensors cross through
/// PyTorch's casters (no copy; the autograd graph built in C++ is the one Python sees).
/// The Python-facing API (tessera.sla) wraps these; keep numerics in C++.

#include "torch_casts.h"  // first: it includes Python.h

#include <ATen/Parallel.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "tessera/core/threads.h"
#include "tessera/sla/determinant.h"
#include "tessera/sla/diffusion.h"
#include "tessera/sla/eigsh.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/matrix_market.h"
#include "tessera/sla/nonlinear_solve.h"
#include "tessera/sla/solve.h"
#include "tessera/sla/sparse_tensor.h"
#include "tessera/sla/sparse_tensor_list.h"
#include "tessera/sla/stencil.h"

namespace tessera::python {
namespace {

using namespace tessera::sla;

/// Keeps the caller's thread count (torch.set_num_threads) across a call and its backward
/// pass: the direct backends lower OpenBLAS to one thread and then restore OpenBLAS's own
/// count, which with the OpenMP build of OpenBLAS also sets the OpenMP count of the calling
/// thread (seen: a solve after torch.set_num_threads(1) left torch.get_num_threads() at 2).
/// OpenBLAS's count is first set to torch's, so that every such restore, the adjoint solves
/// of a later backward pass included, restores torch's count.
class KeepThreadCount {
 public:
  KeepThreadCount() : threads_(at::get_num_threads()) {
    if (core::blas_threads() > 0 && core::blas_threads() != threads_) core::set_blas_threads(threads_);
  }
  ~KeepThreadCount() {
    if (at::get_num_threads() != threads_) at::set_num_threads(threads_);
  }
  KeepThreadCount(const KeepThreadCount&) = delete;
  KeepThreadCount& operator=(const KeepThreadCount&) = delete;

 private:
  int threads_;
};

Which parse_which(const std::string& name) {
  if (name == "largest" || name == "LA") return Which::Largest;
  if (name == "smallest" || name == "SA") return Which::Smallest;
  if (name == "nearest") return Which::Nearest;
  TESSERA_THROW(InvalidInput, "unknown which '", name, "'; expected one of largest (LA), smallest (SA), nearest");
}

std::string solve_info_repr(const SolveInfo& i) {
  return tessera::detail::concat("SolveInfo(status='", to_string(i.status), "', backend='", i.backend, "', method='",
                        to_string(i.method), "', iterations=", i.iterations, ", residual=", i.residual,
                        i.spmv_format.empty() ? "" : ", spmv_format='" + i.spmv_format + "'",
                        i.message.empty() ? "" : ", message='" + i.message + "'", ")");
}

void bind_options(py::module_& m) {
  py::class_<SolveOptions>(m, "SolveOptions", "Options of a sparse solve (see tessera/sla/solve_options.h).")
      .def(py::init<>())
      .def_property(
          "backend", [](const SolveOptions& o) { return std::string(to_string(o.backend)); },
          [](SolveOptions& o, const std::string& s) { o.backend = parse_backend(s); })
      .def_property(
          "method", [](const SolveOptions& o) { return std::string(to_string(o.method)); },
          [](SolveOptions& o, const std::string& s) { o.method = parse_method(s); })
      .def_property(
          "preconditioner", [](const SolveOptions& o) { return std::string(to_string(o.preconditioner)); },
          [](SolveOptions& o, const std::string& s) { o.preconditioner = parse_preconditioner(s); })
      .def_readwrite("rtol", &SolveOptions::rtol)
      .def_readwrite("atol", &SolveOptions::atol)
      .def_readwrite("maxiter", &SolveOptions::maxiter)
      .def_readwrite("gmres_restart", &SolveOptions::gmres_restart)
      .def_readwrite("memory_budget_bytes", &SolveOptions::memory_budget_bytes)
      .def_readwrite("stencil_spmv", &SolveOptions::stencil_spmv);

  py::class_<SolveInfo>(m, "SolveInfo", "Outcome of a solve: status, backend and method that ran, iterations, residual.")
      .def_readonly("backend", &SolveInfo::backend)
      .def_property_readonly("method", [](const SolveInfo& i) { return std::string(to_string(i.method)); })
      .def_property_readonly("status", [](const SolveInfo& i) { return std::string(to_string(i.status)); })
      .def_property_readonly("converged", [](const SolveInfo& i) { return i.status == SolveStatus::Converged; })
      .def_readonly("iterations", &SolveInfo::iterations)
      .def_readonly("residual", &SolveInfo::residual)
      .def_readonly("message", &SolveInfo::message)
      .def_readonly("spmv_format", &SolveInfo::spmv_format)
      .def("__repr__", &solve_info_repr);

  py::class_<EigshOptions>(m, "EigshOptions")
      .def(py::init<>())
      .def_readwrite("k", &EigshOptions::k)
      .def_property(
          "which", [](const EigshOptions& o) { return std::string(to_string(o.which)); },
          [](EigshOptions& o, const std::string& s) { o.which = parse_which(s); })
      .def_readwrite("sigma", &EigshOptions::sigma)
      .def_property(
          "backend", [](const EigshOptions& o) { return std::string(to_string(o.backend)); },
          [](EigshOptions& o, const std::string& s) { o.backend = parse_eigsh_backend(s); })
      .def_readwrite("tol", &EigshOptions::tol)
      .def_readwrite("ncv", &EigshOptions::ncv)
      .def_readwrite("block_size", &EigshOptions::block_size)
      .def_readwrite("maxiter", &EigshOptions::maxiter)
      .def_property(
          "solver_backend", [](const EigshOptions& o) { return std::string(to_string(o.solver_backend)); },
          [](EigshOptions& o, const std::string& s) { o.solver_backend = parse_backend(s); })
      .def_readwrite("seed", &EigshOptions::seed);

  py::class_<EigshInfo>(m, "EigshInfo", "Outcome of eigsh: status, backend, iterations, true residuals.")
      .def_readonly("backend", &EigshInfo::backend)
      .def_property_readonly("status", [](const EigshInfo& i) { return std::string(to_string(i.status)); })
      .def_property_readonly("converged", [](const EigshInfo& i) { return i.status == SolveStatus::Converged; })
      .def_readonly("iterations", &EigshInfo::iterations)
      .def_readonly("operator_applications", &EigshInfo::operator_applications)
      .def_readonly("shift_invert", &EigshInfo::shift_invert)
      .def_readonly("sigma", &EigshInfo::sigma)
      .def_readonly("residuals", &EigshInfo::residuals)
      .def_readonly("max_residual", &EigshInfo::max_residual)
      .def_readonly("message", &EigshInfo::message)
      .def("__repr__", [](const EigshInfo& i) {
        return tessera::detail::concat("EigshInfo(status='", to_string(i.status), "', backend='", i.backend,
                              "', iterations=", i.iterations, ", max_residual=", i.max_residual, ")");
      });

  py::class_<DetOptions>(m, "DetOptions")
      .def(py::init<>())
      .def_property(
          "backend", [](const DetOptions& o) { return std::string(to_string(o.backend)); },
          [](DetOptions& o, const std::string& s) { o.backend = parse_backend(s); });

  py::class_<DetInfo>(m, "DetInfo", "Outcome of det/logdet/slogdet: status, backend and method that ran.")
      .def_readonly("backend", &DetInfo::backend)
      .def_property_readonly("method", [](const DetInfo& i) { return std::string(to_string(i.method)); })
      .def_property_readonly("status", [](const DetInfo& i) { return std::string(to_string(i.status)); })
      .def_property_readonly("converged", [](const DetInfo& i) { return i.status == SolveStatus::Converged; })
      .def_readonly("message", &DetInfo::message)
      .def("__repr__", [](const DetInfo& i) {
        return tessera::detail::concat("DetInfo(status='", to_string(i.status), "', backend='", i.backend, "', method='",
                              to_string(i.method), "'", i.message.empty() ? "" : ", message='" + i.message + "'",
                              ")");
      });

  py::class_<NonlinearOptions>(m, "NonlinearOptions")
      .def(py::init<>())
      .def_readwrite("rtol", &NonlinearOptions::rtol)
      .def_readwrite("atol", &NonlinearOptions::atol)
      .def_readwrite("maxiter", &NonlinearOptions::maxiter)
      .def_readwrite("line_search", &NonlinearOptions::line_search)
      .def_readwrite("anderson", &NonlinearOptions::anderson)
      .def_readwrite("anderson_depth", &NonlinearOptions::anderson_depth)
      .def_readwrite("jacobian_pattern", &NonlinearOptions::jacobian_pattern)
      .def_readwrite("linear", &NonlinearOptions::linear)
      .def_readwrite("krylov_rtol", &NonlinearOptions::krylov_rtol);

  py::class_<NonlinearInfo>(m, "NonlinearInfo", "Outcome of nonlinear_solve: status, iterations, ||F(u*)||.")
      .def_property_readonly("status", [](const NonlinearInfo& i) { return std::string(to_string(i.status)); })
      .def_property_readonly("converged", [](const NonlinearInfo& i) { return i.status == SolveStatus::Converged; })
      .def_readonly("iterations", &NonlinearInfo::iterations)
      .def_readonly("residual_evaluations", &NonlinearInfo::residual_evaluations)
      .def_readonly("linear_iterations", &NonlinearInfo::linear_iterations)
      .def_readonly("colors", &NonlinearInfo::colors)
      .def_readonly("residual", &NonlinearInfo::residual)
      .def_readonly("message", &NonlinearInfo::message)
      .def("__repr__", [](const NonlinearInfo& i) {
        return tessera::detail::concat("NonlinearInfo(status='", to_string(i.status), "', iterations=", i.iterations,
                              ", residual=", i.residual, i.message.empty() ? "" : ", message='" + i.message + "'",
                              ")");
      });
}

void bind_sparse_tensor(py::module_& m) {
  py::class_<SparseTensor>(m, "SparseTensor", "C++ tessera::sla::SparseTensor (CSR pattern, batched values).")
      .def_static("from_csr", &SparseTensor::from_csr, py::arg("row_ptr"), py::arg("col_idx"), py::arg("values"),
                  py::arg("rows"), py::arg("cols"))
      .def_static("from_coo", &SparseTensor::from_coo, py::arg("values"), py::arg("row"), py::arg("col"),
                  py::arg("rows"), py::arg("cols"))
      .def_static("from_symmetric_coo", &SparseTensor::from_symmetric_coo, py::arg("values"), py::arg("row"),
                  py::arg("col"), py::arg("n"), py::arg("skew") = false)
      .def_static("from_dense", &SparseTensor::from_dense, py::arg("dense"))
      .def_property_readonly("rows", &SparseTensor::rows)
      .def_property_readonly("cols", &SparseTensor::cols)
      .def_property_readonly("nnz", &SparseTensor::nnz)
      .def_property_readonly("row_ptr", &SparseTensor::row_ptr)
      .def_property_readonly("col_idx", &SparseTensor::col_idx)
      .def_property_readonly("values", &SparseTensor::values)
      .def_property_readonly("batch_shape", &SparseTensor::batch_shape)
      .def("with_values", &SparseTensor::with_values, py::arg("values"))
      .def("to_dense", &SparseTensor::to_dense)
      .def("transpose", &SparseTensor::transpose)
      .def("to", [](const SparseTensor& a, const py::object& dtype) { return a.to(scalar_type_from(dtype, a.dtype())); })
      .def("diagonal", &SparseTensor::diagonal)
      .def("row_indices", &SparseTensor::row_indices);

  m.def("matvec", &matvec, py::arg("a"), py::arg("x"));
  m.def("rmatvec", &rmatvec, py::arg("a"), py::arg("x"));
}

// A constant-coefficient stencil operator held matrix-free (stencil.h): forward solves only.
void bind_stencil(py::module_& m) {
  py::class_<StencilMatrix>(m, "StencilMatrix")
      .def_readonly("offsets", &StencilMatrix::offsets)
      .def_readonly("coeffs", &StencilMatrix::coeffs)
      .def_readonly("mask", &StencilMatrix::mask)
      .def("rows", &StencilMatrix::rows)
      .def("nnz", &StencilMatrix::nnz)
      .def("to_sparse", &StencilMatrix::to_sparse)
      .def("__repr__", [](const StencilMatrix& a) {
        return "StencilMatrix(rows=" + std::to_string(a.rows()) + ", diagonals=" + std::to_string(a.offsets.size()) +
               ", nnz=" + std::to_string(a.nnz()) + ")";
      });
  m.def("poisson2d_stencil", &poisson2d_stencil, py::arg("n"));
  m.def("poisson3d_stencil", &poisson3d_stencil, py::arg("n"));
  m.def("stencil_of", &stencil_of, py::arg("a"));
  m.def(
      "solve",
      [](const StencilMatrix& a, const at::Tensor& b, const SolveOptions& o) {
        py::gil_scoped_release release;
        KeepThreadCount keep_threads;
        return solve(a, b, o);
      },
      py::arg("a"), py::arg("b"), py::arg("options"));
}

void bind_solvers(py::module_& m) {
  m.def(
      "solve",
      [](const SparseTensor& a, const at::Tensor& b, const SolveOptions& o) {
        py::gil_scoped_release release;
        KeepThreadCount keep_threads;
        return solve(a, b, o);
      },
      py::arg("a"), py::arg("b"), py::arg("options"));
  m.def(
      "eigsh",
      [](const SparseTensor& a, const EigshOptions& o) {
        py::gil_scoped_release release;
        KeepThreadCount keep_threads;
        EigshResult r = eigsh(a, o);
        return std::make_tuple(r.eigenvalues, r.eigenvectors, r.info);
      },
      py::arg("a"), py::arg("options"));
  m.def(
      "slogdet",
      [](const SparseTensor& a, const DetOptions& o) {
        py::gil_scoped_release release;
        KeepThreadCount keep_threads;
        SlogdetResult r = slogdet(a, o);
        return std::make_tuple(r.sign, r.logabsdet, r.info);
      },
      py::arg("a"), py::arg("options"));
  m.def(
      "logdet",
      [](const SparseTensor& a, const DetOptions& o) {
        py::gil_scoped_release release;
        KeepThreadCount keep_threads;
        return logdet(a, o);
      },
      py::arg("a"), py::arg("options"));
  m.def(
      "det",
      [](const SparseTensor& a, const DetOptions& o) {
        py::gil_scoped_release release;
        KeepThreadCount keep_threads;
        return det(a, o);
      },
      py::arg("a"), py::arg("options"));

  m.def(
      "nonlinear_solve",
      [](const py::function& residual, const at::Tensor& u0, const std::vector<at::Tensor>& params,
         const NonlinearOptions& o) {
        ResidualFn f = wrap_residual(residual);
        // The C++ side runs the autograd engine (vector-Jacobian products), which must not
        // be entered holding the GIL; `f` takes it back for each call of `residual`.
        py::gil_scoped_release release;
        KeepThreadCount keep_threads;
        return nonlinear_solve(f, u0, params, o);
      },
      py::arg("residual"), py::arg("u0"), py::arg("params"), py::arg("options"));
}

void bind_list(py::module_& m) {
  py::class_<SparseTensorList>(m, "SparseTensorList", "C++ tessera::sla::SparseTensorList.")
      .def(py::init<std::vector<SparseTensor>>(), py::arg("items"))
      .def("__len__", &SparseTensorList::size)
      .def("__getitem__", [](const SparseTensorList& l, size_t i) { return l[i]; })
      .def_property_readonly("items", &SparseTensorList::items)
      .def("to_block_diagonal", &SparseTensorList::to_block_diagonal)
      .def_static("from_block_diagonal", &SparseTensorList::from_block_diagonal, py::arg("a"), py::arg("sizes"))
      .def("matvec", &SparseTensorList::matvec, py::arg("x"))
      .def(
          "solve",
          [](const SparseTensorList& l, const std::vector<at::Tensor>& b, const SolveOptions& o) {
            py::gil_scoped_release release;
        KeepThreadCount keep_threads;
            return l.solve(b, o);
          },
          py::arg("b"), py::arg("options"))
      .def(
          "eigsh",
          [](const SparseTensorList& l, const EigshOptions& o) {
            std::vector<std::tuple<at::Tensor, at::Tensor, EigshInfo>> out;
            {
              py::gil_scoped_release release;
        KeepThreadCount keep_threads;
              for (EigshResult& r : l.eigsh(o)) out.emplace_back(r.eigenvalues, r.eigenvectors, r.info);
            }
            return out;
          },
          py::arg("options"))
      .def(
          "logdet",
          [](const SparseTensorList& l, const DetOptions& o) {
            py::gil_scoped_release release;
        KeepThreadCount keep_threads;
            return l.logdet(o);
          },
          py::arg("options"));
}

void bind_matrices(py::module_& m) {
  m.def(
      "read_mtx",
      [](const std::string& path, const py::object& dtype) {
        return read_sparse_matrix_market(path, scalar_type_from(dtype, at::kDouble));
      },
      py::arg("path"), py::arg("dtype") = py::none());
  m.def("read_dense_mtx", &read_dense_matrix_market, py::arg("path"));
  m.def("write_mtx", &write_matrix_market, py::arg("path"), py::arg("a"), py::arg("symmetric") = false);
  m.def(
      "poisson2d", [](int64_t n, const py::object& dtype) { return poisson2d(n, scalar_type_from(dtype, at::kDouble)); },
      py::arg("n"), py::arg("dtype") = py::none());
  m.def(
      "poisson3d", [](int64_t n, const py::object& dtype) { return poisson3d(n, scalar_type_from(dtype, at::kDouble)); },
      py::arg("n"), py::arg("dtype") = py::none());
  m.def(
      "shifted_laplacian2d",
      [](int64_t n, double shift, const py::object& dtype) {
        return shifted_laplacian2d(n, shift, scalar_type_from(dtype, at::kDouble));
      },
      py::arg("n"), py::arg("shift"), py::arg("dtype") = py::none());
  m.def(
      "convection_diffusion2d",
      [](int64_t n, double wx, double wy, const py::object& dtype) {
        return convection_diffusion2d(n, wx, wy, scalar_type_from(dtype, at::kDouble));
      },
      py::arg("n"), py::arg("wx"), py::arg("wy"), py::arg("dtype") = py::none());
  m.def("diffusion2d", &diffusion2d, py::arg("kappa"));
  m.def(
      "variable_diffusion",
      [](int dims, int64_t n, double sigma, uint64_t seed, const py::object& dtype) {
        const LogNormalField field{sigma, seed};
        const at::ScalarType type = scalar_type_from(dtype, at::kDouble);
        TESSERA_CHECK(dims == 2 || dims == 3, InvalidInput, "variable_diffusion: dims must be 2 or 3, got ", dims);
        return dims == 2 ? variable_diffusion2d(n, field, type) : variable_diffusion3d(n, field, type);
      },
      py::arg("dims"), py::arg("n"), py::arg("sigma"), py::arg("seed"), py::arg("dtype") = py::none());
  m.def(
      "fe_laplacian2d",
      [](int64_t n, double jitter, bool random_diagonals, uint64_t seed, const py::object& dtype) {
        return fe_laplacian2d(n, {jitter, random_diagonals, seed}, scalar_type_from(dtype, at::kDouble));
      },
      py::arg("n"), py::arg("jitter"), py::arg("random_diagonals"), py::arg("seed"), py::arg("dtype") = py::none());
}

}  // namespace

std::function<at::Tensor(const at::Tensor&, const std::vector<at::Tensor>&)> wrap_residual(const py::function& residual) {
  std::shared_ptr<py::object> fn(new py::object(residual), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
  return [fn](const at::Tensor& u, const std::vector<at::Tensor>& p) -> at::Tensor {
    py::gil_scoped_acquire gil;
    py::object r = (*fn)(u, p);
    TESSERA_CHECK(THPVariable_Check(r.ptr()), InvalidInput, "the residual function must return a torch.Tensor, got ",
                  std::string(py::str(r.get_type())));
    return r.cast<at::Tensor>();
  };
}

void bind_sla(py::module_& m) {
  bind_options(m);
  bind_sparse_tensor(m);
  bind_solvers(m);
  bind_stencil(m);
  bind_list(m);
  bind_matrices(m);
}

}  // namespace tessera::python
