// Grid matrices assembled row by row straight into CSR (int32 indices where they fit): no
// COO and no int64 copy at full size.

#include "tessera/sla/generators.h"

#include <ATen/ATen.h>

#include <array>
#include <limits>

#include "sla/csr_rows.h"
#include "tessera/core/error.h"

namespace tessera::sla {
namespace {

/// Coefficients of a constant stencil: the diagonal, and per dimension the neighbour
/// below (coordinate - 1) and above (coordinate + 1).
struct Stencil {
  double diagonal = 0;
  std::array<double, 3> below{}, above{};
};

/// Row i: neighbours below i (largest stride first), the diagonal, neighbours above i, only
/// those inside the grid; columns ascending.
template <typename I>
void fill_grid(int64_t n, int dims, const Stencil& s, at::Tensor& row_ptr, at::Tensor& col, at::Tensor& val) {
  const int64_t rows = row_ptr.size(0) - 1;
  const std::array<int64_t, 3> stride{1, n, n * n};
  auto coord = [&](int64_t i, int d) { return (i / stride[d]) % n; };
  auto count = [&](int64_t i) {
    int64_t c = 1;
    for (int d = 0; d < dims; ++d) c += (coord(i, d) > 0) + (coord(i, d) < n - 1);
    return c;
  };
  auto write = [&](int64_t i, I* cp, double* vp) {
    int64_t p = 0;
    for (int d = dims - 1; d >= 0; --d) {
      if (coord(i, d) > 0) { cp[p] = static_cast<I>(i - stride[d]); vp[p++] = s.below[d]; }
    }
    cp[p] = static_cast<I>(i);
    vp[p++] = s.diagonal;
    for (int d = 0; d < dims; ++d) {
      if (coord(i, d) < n - 1) { cp[p] = static_cast<I>(i + stride[d]); vp[p++] = s.above[d]; }
    }
  };
  detail::assemble_csr_rows<I>(rows, row_ptr, col, val, count, write);
}

SparseTensor grid_matrix(int64_t n, int dims, const Stencil& s, at::ScalarType dtype, const char* what) {
  TESSERA_CHECK(n >= 1, InvalidInput, what, ": grid size must be >= 1, got ", n);
  TESSERA_CHECK(dtype == at::kFloat || dtype == at::kDouble, Unsupported, what, ": float32 or float64 only");
  int64_t rows = 1;
  for (int d = 0; d < dims; ++d) rows *= n;
  const int64_t nnz_bound = rows * (1 + 2 * dims);
  const bool small = nnz_bound < std::numeric_limits<int32_t>::max();
  at::Tensor row_ptr = at::empty({rows + 1}, small ? at::kInt : at::kLong), col, val;
  if (small) {
    fill_grid<int32_t>(n, dims, s, row_ptr, col, val);
  } else {
    fill_grid<int64_t>(n, dims, s, row_ptr, col, val);
  }
  return SparseTensor::from_csr(row_ptr, col, dtype == at::kDouble ? val : val.to(dtype), rows, rows);
}

Stencil laplacian(int dims) {
  Stencil s;
  s.diagonal = 2.0 * dims;
  s.below = {-1.0, -1.0, -1.0};
  s.above = {-1.0, -1.0, -1.0};
  return s;
}

}  // namespace

SparseTensor poisson2d(int64_t n, at::ScalarType dtype) { return grid_matrix(n, 2, laplacian(2), dtype, "poisson2d"); }
SparseTensor poisson3d(int64_t n, at::ScalarType dtype) { return grid_matrix(n, 3, laplacian(3), dtype, "poisson3d"); }

SparseTensor shifted_laplacian2d(int64_t n, double shift, at::ScalarType dtype) {
  Stencil s = laplacian(2);
  s.diagonal -= shift;                                   // (L - shift I)
  return grid_matrix(n, 2, s, dtype, "shifted_laplacian2d");
}

SparseTensor convection_diffusion2d(int64_t n, double wx, double wy, at::ScalarType dtype) {
  const double h = 1.0 / static_cast<double>(n + 1);
  Stencil s = laplacian(2);
  // h^2 (-Δu + w·∇u) with central differences: neighbours -1 ∓ h w_d / 2
  s.below = {-1.0 - 0.5 * h * wx, -1.0 - 0.5 * h * wy, 0.0};
  s.above = {-1.0 + 0.5 * h * wx, -1.0 + 0.5 * h * wy, 0.0};
  return grid_matrix(n, 2, s, dtype, "convection_diffusion2d");
}

}  // namespace tessera::sla
