// Cell-centred finite-volume diffusion operator assembled with differentiable ATen ops.

#include <ATen/ATen.h>

#include "tessera/core/error.h"
#include "tessera/sla/diffusion.h"
#include "tessera/sla/generators.h"

namespace tessera::sla {
namespace {

/// Positions of the stored entries in the dense [n, n, 5] stencil array (order south,
/// west, centre, east, north = ascending column order of a CSR row).
at::Tensor stored_stencil_positions(int64_t n) {
  at::Tensor r = at::arange(n, at::kLong).view({n, 1}).expand({n, n});
  at::Tensor c = at::arange(n, at::kLong).view({1, n}).expand({n, n});
  at::Tensor present = at::stack({r > 0, c > 0, at::ones({n, n}, at::kBool), c < n - 1, r < n - 1}, -1);
  return at::nonzero(present.reshape({-1})).squeeze(1);
}

}  // namespace

SparseTensor diffusion2d(const at::Tensor& kappa) {
  TESSERA_CHECK(kappa.dim() >= 2 && kappa.size(-1) == kappa.size(-2) && kappa.size(-1) >= 1, InvalidInput,
                "diffusion2d: kappa must be [..., n, n] with n >= 1, got ", kappa.sizes());
  TESSERA_CHECK(kappa.scalar_type() == at::kFloat || kappa.scalar_type() == at::kDouble, Unsupported,
                "diffusion2d: kappa must be float32 or float64");
  const int64_t n = kappa.size(-1);
  const double inv_h2 = static_cast<double>(n) * static_cast<double>(n);   // 1 / h²
  // Interior face conductivities: harmonic means of the two cells.
  at::Tensor kx = 2 * kappa.narrow(-1, 0, n - 1) * kappa.narrow(-1, 1, n - 1) /
                  (kappa.narrow(-1, 0, n - 1) + kappa.narrow(-1, 1, n - 1));   // [.., n, n-1], faces (r, c|c+1)
  at::Tensor ky = 2 * kappa.narrow(-2, 0, n - 1) * kappa.narrow(-2, 1, n - 1) /
                  (kappa.narrow(-2, 0, n - 1) + kappa.narrow(-2, 1, n - 1));   // [.., n-1, n], faces (r|r+1, c)
  // Off-diagonal couplings -κ_f / h², zero where the neighbour is outside the grid.
  at::Tensor east = at::constant_pad_nd(kx, {0, 1}) * -inv_h2;
  at::Tensor west = at::constant_pad_nd(kx, {1, 0}) * -inv_h2;
  at::Tensor north = at::constant_pad_nd(ky, {0, 0, 0, 1}) * -inv_h2;
  at::Tensor south = at::constant_pad_nd(ky, {0, 0, 1, 0}) * -inv_h2;
  // Boundary faces: transmissibility 2 κ_cell per face on the boundary.
  at::Tensor idx = at::arange(n, kappa.options().dtype(at::kLong));
  at::Tensor faces_x = (idx == 0).to(kappa.scalar_type()) + (idx == n - 1).to(kappa.scalar_type());   // per column
  at::Tensor boundary_faces = faces_x.view({1, n}) + faces_x.view({n, 1});   // [n, n] count of boundary faces
  // a_ii = Σ_interior κ_f / h² + Σ_boundary 2 κ_i / h²
  at::Tensor centre = -(east + west + north + south) + 2 * inv_h2 * kappa * boundary_faces;
  at::Tensor stencil = at::stack({south, west, centre, east, north}, -1);   // [..., n, n, 5]
  std::vector<int64_t> flat(kappa.sizes().begin(), kappa.sizes().end() - 2);
  flat.push_back(n * n * 5);
  at::Tensor values = stencil.reshape(flat).index_select(-1, stored_stencil_positions(n).to(kappa.device()));
  SparseTensor pattern = poisson2d(n, kappa.scalar_type());
  return pattern.with_values(values);
}

}  // namespace tessera::sla
