// Ritz pairs to sorted, sign-fixed eigenpairs (eigsh and deigsh).

#include "sla/eigsh/eigenpairs.h"

#include <ATen/ATen.h>

namespace tessera::sla::detail {

at::Tensor largest_entries_local(const at::Tensor& v) {
  return v.gather(0, v.abs().argmax(0, /*keepdim=*/true));   // v_{i*(j), j}, i*(j) = argmax_i |v_ij|
}

std::pair<at::Tensor, at::Tensor> sorted_eigenpairs(const RitzPairs& pairs, const EigshOptions& options,
                                                    const LargestEntries& largest_entries) {
  at::Tensor lambda = options.which == Which::Nearest ? options.sigma + pairs.theta.reciprocal()   // λ = σ + 1/θ
                                                      : pairs.theta;
  at::Tensor order = std::get<1>(lambda.sort(0));
  lambda = lambda.index_select(0, order).contiguous();
  at::Tensor vectors = pairs.vectors.index_select(1, order);
  at::Tensor largest = largest_entries(vectors);                                                   // [1, k]
  vectors = vectors * at::where(largest < 0, -at::ones({1}, at::kDouble), at::ones({1}, at::kDouble));
  return {lambda, vectors.contiguous()};
}

RitzPairs dense_ritz_pairs(const at::Tensor& m, const LanczosParams& params) {
  auto [evals, evecs] = at::linalg_eigh((m + m.t()) * 0.5);
  at::Tensor key = params.order == RitzOrder::LargestAlgebraic    ? evals
                   : params.order == RitzOrder::SmallestAlgebraic ? -evals
                                                                  : evals.abs();
  at::Tensor order = std::get<1>(key.sort(0, true)).narrow(0, 0, params.k);
  RitzPairs out;
  out.theta = evals.index_select(0, order);
  out.vectors = evecs.index_select(1, order);
  out.converged = true;
  out.iterations = 1;
  out.applications = m.size(0);
  return out;
}

void set_ritz_info(EigshInfo& info, const at::Tensor& residuals, const RitzPairs& pairs) {
  info.residuals = residuals;
  info.max_residual = residuals.max().item<double>();
  info.status = pairs.converged ? SolveStatus::Converged : SolveStatus::NotConverged;
  info.message = pairs.message;
}

}  // namespace tessera::sla::detail
