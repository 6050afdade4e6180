// -div(κ grad u) with a log-normal cell field κ, 5-/7-point finite volumes, assembled row by
// row straight into CSR for any contiguous range of rows (int32 indices where they fit).

#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "sla/csr_rows.h"
#include "tessera/core/error.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/random_field.h"

namespace tessera::sla {
namespace {

/// The grid n^dims and the field's parameters.
struct Grid {
  int dims;
  int64_t n;
  std::array<int64_t, 3> stride;   // 1, n, n^2
  int64_t cells;
};

Grid make_grid(int dims, int64_t n) {
  Grid g{dims, n, {1, n, n * n}, 1};
  for (int d = 0; d < dims; ++d) g.cells *= n;
  return g;
}

/// Face coefficient between cells with conductivities a and b: the harmonic mean
/// 2ab / (a + b), written so that it is bitwise the same for (a, b) and (b, a).
double harmonic(double a, double b) { return 2.0 * (a * b) / (a + b); }

/// Rows [r0, r1) into row_ptr (relative, from 0), col (global), val. κ holds the cells
/// [k0, k0 + kappa.size(0)), which covers every neighbour of the rows.
template <typename I>
void fill_rows(const Grid& g, int64_t r0, int64_t r1, const double* kappa, int64_t k0, at::Tensor& row_ptr,
               at::Tensor& col, at::Tensor& val) {
  const int64_t rows = r1 - r0, n = g.n;
  auto coord = [&](int64_t i, int d) { return (i / g.stride[d]) % n; };
  auto count = [&](int64_t r) {
    int64_t c = 1;
    for (int d = 0; d < g.dims; ++d) c += (coord(r0 + r, d) > 0) + (coord(r0 + r, d) < n - 1);
    return c;
  };
  auto write = [&](int64_t r, I* cp, double* vp) {
    const int64_t i = r0 + r;
    const double ki = kappa[i - k0];
    int64_t p = 0, centre = 0;
    double diagonal = 0.0;
    // a_ii = Σ_faces κ_f, a_ij = -κ_f: interior faces κ_f = harmonic(κ_i, κ_j); a boundary
    // face has the Dirichlet value one cell away, κ_f = κ_i.
    for (int d = g.dims - 1; d >= 0; --d) {   // neighbours below i, largest stride first
      if (coord(i, d) > 0) {
        const double kf = harmonic(ki, kappa[i - g.stride[d] - k0]);
        cp[p] = static_cast<I>(i - g.stride[d]);
        vp[p++] = -kf;
        diagonal += kf;
      } else {
        diagonal += ki;
      }
    }
    centre = p++;
    cp[centre] = static_cast<I>(i);
    for (int d = 0; d < g.dims; ++d) {        // neighbours above i, smallest stride first
      if (coord(i, d) < n - 1) {
        const double kf = harmonic(ki, kappa[i + g.stride[d] - k0]);
        cp[p] = static_cast<I>(i + g.stride[d]);
        vp[p++] = -kf;
        diagonal += kf;
      } else {
        diagonal += ki;
      }
    }
    vp[centre] = diagonal;
  };
  detail::assemble_csr_rows<I>(rows, row_ptr, col, val, count, write);
}

SparseTensor diffusion_rows(int dims, int64_t n, const LogNormalField& field, int64_t r0, int64_t r1,
                            at::ScalarType dtype, const char* what) {
  TESSERA_CHECK(n >= 1, InvalidInput, what, ": grid size must be >= 1, got ", n);
  TESSERA_CHECK(field.sigma >= 0.0 && std::isfinite(field.sigma), InvalidInput, what,
                ": sigma must be finite and >= 0, got ", field.sigma);
  TESSERA_CHECK(dtype == at::kFloat || dtype == at::kDouble, Unsupported, what, ": float32 or float64 only");
  const Grid g = make_grid(dims, n);
  TESSERA_CHECK(0 <= r0 && r0 <= r1 && r1 <= g.cells, InvalidInput, what, ": rows [", r0, ", ", r1,
                ") must lie in [0, ", g.cells, "]");
  // κ on the rows and their neighbours: [r0 - n^(dims-1), r1 + n^(dims-1)) within the grid
  const int64_t halo = g.stride[dims - 1];
  const int64_t k0 = std::max<int64_t>(0, r0 - halo), k1 = std::min(g.cells, r1 + halo);
  const at::Tensor kappa = lognormal_field(field.seed, field.sigma, k0, k1 - k0);
  const int64_t rows = r1 - r0;
  const bool small = g.cells * (1 + 2 * dims) < std::numeric_limits<int32_t>::max();
  at::Tensor row_ptr = at::empty({rows + 1}, small ? at::kInt : at::kLong), col, val;
  if (small) {
    fill_rows<int32_t>(g, r0, r1, kappa.data_ptr<double>(), k0, row_ptr, col, val);
  } else {
    fill_rows<int64_t>(g, r0, r1, kappa.data_ptr<double>(), k0, row_ptr, col, val);
  }
  return SparseTensor::from_csr(row_ptr, col, dtype == at::kDouble ? val : val.to(dtype), rows, g.cells);
}

}  // namespace

SparseTensor variable_diffusion2d(int64_t n, const LogNormalField& field, at::ScalarType dtype) {
  return diffusion_rows(2, n, field, 0, n * n, dtype, "variable_diffusion2d");
}

SparseTensor variable_diffusion3d(int64_t n, const LogNormalField& field, at::ScalarType dtype) {
  return diffusion_rows(3, n, field, 0, n * n * n, dtype, "variable_diffusion3d");
}

SparseTensor variable_diffusion_rows(int dims, int64_t n, const LogNormalField& field, int64_t row_begin,
                                     int64_t row_end, at::ScalarType dtype) {
  TESSERA_CHECK(dims == 2 || dims == 3, InvalidInput, "variable_diffusion_rows: dims must be 2 or 3, got ", dims);
  return diffusion_rows(dims, n, field, row_begin, row_end, dtype, "variable_diffusion_rows");
}

}  // namespace tessera::sla
