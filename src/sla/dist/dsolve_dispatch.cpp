// dsolve's `auto` backend across ranks: the rule documented in dsolve_dispatch.h.

#include "sla/dist/dsolve_dispatch.h"

#include <ATen/ATen.h>

#include <cmath>

#include "sla/backends/mumps/dist_mumps.h"
#include "sla/dist/dist_preconditioner.h"
#include "tessera/sla/solve.h"

namespace tessera::sla::detail {
namespace {

/// ||A x - A^T x||^2 and ||A x||^2 for x_i = sin(1.7 i + 0.3) (global i): the same x at any
/// partition, so every rank count decides alike.
std::pair<double, double> symmetry_defect(const DSparseTensor& a) {
  at::NoGradGuard no_grad;
  const DSparseTensor a64 = a.with_values(a.values().detach().to(at::kDouble));
  at::Tensor owned_ids = a.plan().local_to_global.narrow(0, 0, a.owned_rows());
  at::Tensor x = at::sin(owned_ids.to(at::kDouble) * 1.7 + 0.3);
  at::Tensor ax = a64.matvec(x);
  at::Tensor sums = at::stack({(ax - a64.rmatvec(x)).pow(2).sum(), ax.pow(2).sum()});
  a.comm()->all_reduce(sums, dist::ReduceOp::Sum);
  return {sums[0].item<double>(), sums[1].item<double>()};
}

}  // namespace

DistMatrixSummary summarize_distributed(const DSparseTensor& a) {
  at::NoGradGuard no_grad;
  const at::Tensor& ids = a.plan().local_to_global;
  at::Tensor row_ids = ids.index_select(0, a.local_rows_index());
  at::Tensor col_ids = ids.index_select(0, a.local_cols_index());
  at::Tensor diagonal = a.diagonal().detach();
  // [nnz, max |i - j|, rows without a positive diagonal] summed / maximised over the ranks
  at::Tensor counts = at::zeros({3}, at::kLong);
  counts[0] = a.values().numel();
  counts[2] = (diagonal <= 0).sum();
  a.comm()->all_reduce(counts, dist::ReduceOp::Sum);
  at::Tensor band = at::zeros({1}, at::kLong);
  if (row_ids.numel() > 0) band[0] = (row_ids - col_ids).abs().max();
  a.comm()->all_reduce(band, dist::ReduceOp::Max);
  const auto [defect, scale] = symmetry_defect(a);
  DistMatrixSummary out;
  out.nnz = counts[0].item<int64_t>();
  out.bandwidth = band.item<int64_t>();
  out.positive_diagonal = counts[2].item<int64_t>() == 0;
  out.symmetric = std::sqrt(defect) <= 1e-12 * std::sqrt(scale);
  return out;
}

SolveOptions choose_distributed_solver(const DSparseTensor& a, const SolveOptions& options) {
  SolveOptions out = options;
  if (options.backend != Backend::Auto) return out;
  out.backend = Backend::Native;
  if (is_krylov(options.method)) return out;
  const DistMatrixSummary s = summarize_distributed(a);
  const bool direct_named = options.method == Method::LU;
  const bool fits = estimated_factor_bytes(a.rows(), s.nnz, s.bandwidth, /*lu=*/true) <= options.memory_budget_bytes;
  if (mumps_available() && (fits || direct_named)) {
    out.backend = Backend::Mumps;
    out.method = Method::LU;
    return out;
  }
  if (s.symmetric && !s.positive_diagonal) {
    out.method = Method::MINRES;   // symmetric indefinite: a V-cycle would not be SPD
    return out;
  }
  out.method = s.symmetric ? Method::CG : Method::GMRES;
  if (distributed_boomeramg_available()) out.preconditioner = Preconditioner::BoomerAMG;
  return out;
}

}  // namespace tessera::sla::detail
