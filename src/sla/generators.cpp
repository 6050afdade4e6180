// Poisson matrices assembled row by row straight into CSR.

#include "tessera/sla/generators.h"

#include <ATen/ATen.h>

#include <array>

#include "tessera/core/error.h"

namespace tessera::sla {
namespace {

/// Grid of `dims` dimensions with `n` points per side: row i of the Laplacian has the
/// diagonal 2 * dims and -1 for each neighbour inside the grid, columns ascending.
SparseTensor grid_laplacian(int64_t n, int dims, at::ScalarType dtype) {
  TESSERA_CHECK(n >= 1, InvalidInput, "Poisson grid size must be >= 1, got ", n);
  TESSERA_CHECK(dtype == at::kFloat || dtype == at::kDouble, Unsupported, "Poisson: float32 or float64 only");
  int64_t rows = 1;
  for (int d = 0; d < dims; ++d) rows *= n;
  std::array<int64_t, 3> stride{1, n, n * n};
  auto coord = [&](int64_t i, int d) { return (i / stride[d]) % n; };
  // Entries of row i: 1 + number of neighbours in the grid.
  at::Tensor row_ptr = at::empty({rows + 1}, at::kLong);
  int64_t* rp = row_ptr.data_ptr<int64_t>();
  rp[0] = 0;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    int64_t count = 1;
    for (int d = 0; d < dims; ++d) count += (coord(i, d) > 0) + (coord(i, d) < n - 1);
    rp[i + 1] = count;
  }
  for (int64_t i = 0; i < rows; ++i) rp[i + 1] += rp[i];  // row_ptr = prefix sum of counts
  const int64_t nnz = rp[rows];
  at::Tensor col = at::empty({nnz}, at::kLong);
  at::Tensor val = at::empty({nnz}, at::kDouble);
  int64_t* cp = col.data_ptr<int64_t>();
  double* vp = val.data_ptr<double>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    int64_t p = rp[i];
    // neighbours below i (largest stride first), the diagonal, then neighbours above i
    for (int d = dims - 1; d >= 0; --d) {
      if (coord(i, d) > 0) { cp[p] = i - stride[d]; vp[p++] = -1.0; }
    }
    cp[p] = i;
    vp[p++] = 2.0 * dims;
    for (int d = 0; d < dims; ++d) {
      if (coord(i, d) < n - 1) { cp[p] = i + stride[d]; vp[p++] = -1.0; }
    }
  }
  return SparseTensor::from_csr(row_ptr, col, val.to(dtype), rows, rows);
}

}  // namespace

SparseTensor poisson2d(int64_t n, at::ScalarType dtype) { return grid_laplacian(n, 2, dtype); }
SparseTensor poisson3d(int64_t n, at::ScalarType dtype) { return grid_laplacian(n, 3, dtype); }

}  // namespace tessera::sla
