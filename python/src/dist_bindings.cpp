/// @file dist_bindings.cpp
/// tessera._C.sla: DSparseTensor, a sparse matrix distributed by rows over the processes of
/// an `mpirun` job (the world communicator: MPI when launched by mpirun, else one process).
/// Every call here is collective: every rank makes it, in the same order, and calls
/// backward() on the results. Under mpi4py MPI is already initialised; tessera then uses it.

#include "torch_casts.h"  // first: it includes Python.h

#include <ATen/Parallel.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "tessera/dist/communicator.h"
#include "tessera/sla/dist/deigsh.h"
#include "tessera/sla/dist/dlogdet.h"
#include "tessera/sla/dist/dnonlinear_solve.h"
#include "tessera/sla/dist/dsolve.h"
#include "tessera/sla/dist/dsparse_tensor_batch.h"
#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/dist/partition.h"
#include "tessera/sla/solve_options.h"

namespace tessera::python {
namespace {

using namespace tessera::sla;

RowPartition make_partition(const std::string& kind, const SparseTensor& global, int parts) {
  if (kind == "contiguous") return RowPartition::contiguous(global.rows(), parts);
  if (kind == "metis") return RowPartition::metis(global, parts);
  TESSERA_THROW(InvalidInput, "unknown partition '", kind, "'; expected contiguous or metis");
}

}  // namespace

void bind_dist(py::module_& m) {
  m.def("world_rank", [] { return dist::world()->rank(); });
  m.def("world_size", [] { return dist::world()->size(); });
  m.def("finalize", [] { dist::finalize(); }, "Ends MPI (idempotent); tessera calls it at exit.");

  py::class_<DSparseTensor>(m, "DSparseTensor", "C++ tessera::sla::DSparseTensor (rows distributed over ranks).")
      .def_static(
          "from_global",
          [](const SparseTensor& global, const std::string& partition) {
            auto comm = dist::world();
            return DSparseTensor::from_global(comm, make_partition(partition, global, comm->size()), global);
          },
          py::arg("global_matrix"), py::arg("partition") = "contiguous")
      .def_static(
          "scatter_from_root",
          [](const std::optional<SparseTensor>& global, int64_t rows, int root) {
            auto comm = dist::world();
            return DSparseTensor::scatter_from_root(comm, RowPartition::contiguous(rows, comm->size()),
                                                    global ? *global : SparseTensor(), root);
          },
          py::arg("global_matrix"), py::arg("rows"), py::arg("root") = 0)
      .def_static(
          "from_local_rows",
          [](const SparseTensor& local_rows) {
            auto comm = dist::world();
            std::vector<int64_t> counts = comm->gather_counts(local_rows.rows());
            return DSparseTensor::from_local_rows(comm, RowPartition::from_counts(counts), local_rows);
          },
          py::arg("local_rows"))
      .def_property_readonly("rows", &DSparseTensor::rows)
      .def_property_readonly("owned_rows", &DSparseTensor::owned_rows)
      .def_property_readonly("values", &DSparseTensor::values)
      .def_property_readonly("rank", [](const DSparseTensor& a) { return a.comm()->rank(); })
      .def_property_readonly("size", [](const DSparseTensor& a) { return a.comm()->size(); })
      .def("owned_row_ids", [](const DSparseTensor& a) { return a.partition().rows_of(a.comm()->rank()); })
      .def("global_nnz", &DSparseTensor::global_nnz)
      .def("with_values", &DSparseTensor::with_values, py::arg("values"))
      .def("matvec", &DSparseTensor::matvec, py::arg("x_owned"))
      .def("rmatvec", &DSparseTensor::rmatvec, py::arg("x_owned"))
      .def("diagonal", &DSparseTensor::diagonal)
      .def("scatter", &DSparseTensor::scatter, py::arg("global_vector"), py::arg("from_root") = false,
           py::arg("root") = 0)
      .def("gather_all", &DSparseTensor::gather_all, py::arg("owned"))
      .def(
          "solve",
          [](const DSparseTensor& a, const at::Tensor& b, const SolveOptions& o) {
            py::gil_scoped_release release;
            return dsolve(a, b, o);
          },
          py::arg("b_owned"), py::arg("options"))
      .def(
          "eigsh",
          [](const DSparseTensor& a, const EigshOptions& o) {
            py::gil_scoped_release release;
            EigshResult r = deigsh(a, o);
            return std::make_tuple(r.eigenvalues, r.eigenvectors, r.info);
          },
          py::arg("options"))
      .def(
          "slogdet",
          [](const DSparseTensor& a, const DetOptions& o) {
            py::gil_scoped_release release;
            SlogdetResult r = dslogdet(a, o);
            return std::make_tuple(r.sign, r.logabsdet, r.info);
          },
          py::arg("options"))
      .def(
          "logdet",
          [](const DSparseTensor& a, const DetOptions& o) {
            py::gil_scoped_release release;
            return dlogdet(a, o);
          },
          py::arg("options"));

  m.def(
      "dnonlinear_solve",
      [](const py::function& residual, const at::Tensor& u0, const std::vector<at::Tensor>& params,
         const DSparseTensor& pattern, const NonlinearOptions& o) {
        ResidualFn f = wrap_residual(residual);
        py::gil_scoped_release release;   // the autograd engine runs in C++; f takes the GIL back
        return dnonlinear_solve(f, u0, params, pattern, o);
      },
      py::arg("residual"), py::arg("u0"), py::arg("params"), py::arg("jacobian_pattern"), py::arg("options"));

  py::class_<DSparseTensorBatch>(m, "DSparseTensorBatch",
                                 "C++ tessera::sla::DSparseTensorBatch (batched values on one distributed pattern).")
      .def_static(
          "from_global",
          [](const SparseTensor& global, const std::string& partition) {
            auto comm = dist::world();
            return DSparseTensorBatch::from_global(comm, make_partition(partition, global, comm->size()), global);
          },
          py::arg("global_matrix"), py::arg("partition") = "contiguous")
      .def(py::init<const DSparseTensor&, const at::Tensor&>(), py::arg("pattern"), py::arg("values"))
      .def_property_readonly("batch_size", &DSparseTensorBatch::batch_size)
      .def_property_readonly("values", &DSparseTensorBatch::values)
      .def("item", &DSparseTensorBatch::operator[], py::arg("b"))
      .def("matvec", &DSparseTensorBatch::matvec, py::arg("x"))
      .def("rmatvec", &DSparseTensorBatch::rmatvec, py::arg("x"))
      .def(
          "solve",
          [](const DSparseTensorBatch& a, const at::Tensor& b, const SolveOptions& o) {
            py::gil_scoped_release release;
            return a.solve(b, o);
          },
          py::arg("b"), py::arg("options"))
      .def(
          "eigsh",
          [](const DSparseTensorBatch& a, const EigshOptions& o) {
            py::gil_scoped_release release;
            auto [pairs, infos] = a.eigsh(o);
            return std::make_tuple(pairs.first, pairs.second, infos);
          },
          py::arg("options"))
      .def(
          "slogdet",
          [](const DSparseTensorBatch& a, const DetOptions& o) {
            py::gil_scoped_release release;
            auto [pairs, infos] = a.slogdet(o);
            return std::make_tuple(pairs.first, pairs.second, infos);
          },
          py::arg("options"));
}

}  // namespace tessera::python
