#pragma once
// Ritz pairs of eigsh's operator turned into eigsh's eigenpairs, the same for one process and
// for rows distributed over ranks: only where the entry of largest magnitude of a column is
// found differs.

#include <ATen/core/Tensor.h>

#include <functional>
#include <utility>

#include "sla/eigsh/lanczos.h"
#include "tessera/sla/eigsh.h"

namespace tessera::sla::detail {

/// The entry of largest magnitude of each column of V [rows, k], as [1, k]: over this
/// process's rows, or over every rank's.
using LargestEntries = std::function<at::Tensor(const at::Tensor& v)>;

/// λ ascending, λ = θ, or λ = σ + 1/θ for shift-invert (Which::Nearest), with the Ritz vectors
/// in the same order, each column's sign chosen so that its entry of largest magnitude is
/// positive (a deterministic sign at any rank count). Returns (λ [k], V [rows, k]).
std::pair<at::Tensor, at::Tensor> sorted_eigenpairs(const RitzPairs& pairs, const EigshOptions& options,
                                                    const LargestEntries& largest_entries);

/// The wanted Ritz pairs of a small dense symmetric matrix m [n, n] (eigh of (m + m^T) / 2,
/// the wanted ones first): eigsh's path when n is too small for a Krylov space.
RitzPairs dense_ritz_pairs(const at::Tensor& m, const LanczosParams& params);

/// info's Ritz residuals ||A v_i - λ_i v_i|| (`residuals` [k]), their maximum, and the status
/// and message of the Lanczos run.
void set_ritz_info(EigshInfo& info, const at::Tensor& residuals, const RitzPairs& pairs);

/// The one-process LargestEntries: the entry of largest magnitude of each column of V.
at::Tensor largest_entries_local(const at::Tensor& v);

}  // namespace tessera::sla::detail
