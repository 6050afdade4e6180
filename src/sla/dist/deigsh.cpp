// deigsh(A, options): eigsh() on a distributed matrix. Input checks, the operator (the
// distributed product, or (A - σ I)^{-1} by MUMPS), the engine (eigsh's block Lanczos in the
// distributed Lanczos space, or a dense eigensolver for small n), back-transformation,
// residuals with A, and the differentiable result.

#include "tessera/sla/dist/deigsh.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "sla/backends/mumps/dist_mumps.h"
#include "sla/dist/autograd/deigsh_function.h"
#include "sla/dist/distributed_space.h"
#include "sla/eigsh/eigenpairs.h"
#include "sla/eigsh/lanczos.h"
#include "tessera/core/error.h"

namespace tessera::sla {
namespace {

/// Column sums of `t` [..., k] over every rank's rows: [k], the same on every rank.
at::Tensor column_sums(const DSparseTensor& a, const at::Tensor& t) {
  at::Tensor s = t.sum(0).to(at::kDouble).contiguous();
  a.comm()->all_reduce(s, dist::ReduceOp::Sum);
  return s;
}

void check_inputs(const DSparseTensor& a, const EigshOptions& o) {
  TESSERA_CHECK(a.rows() > 1 && a.global_nnz() > 0, InvalidInput, "eigsh: A is empty or 1 x 1 (", a.rows(),
                " rows)");
  TESSERA_CHECK(o.k >= 1 && o.k < a.rows(), InvalidInput, "eigsh: k = ", o.k, " must be in [1, n) with n = ",
                a.rows());
  TESSERA_CHECK(o.tol > 0, InvalidInput, "eigsh: tol must be > 0");
  TESSERA_CHECK(o.backend == EigshBackend::Auto || o.backend == EigshBackend::Native, Unsupported,
                "eigsh across ranks runs the native block Lanczos; backend '", to_string(o.backend),
                "' is single-process");
  at::Tensor bad = at::full({1}, static_cast<int32_t>(!at::isfinite(a.values().detach()).all().item<bool>()), at::kInt);
  a.comm()->all_reduce(bad, dist::ReduceOp::Max);   // every rank throws alike
  TESSERA_CHECK(bad.item<int32_t>() == 0, InvalidInput, "eigsh: A's values contain NaN or Inf (on some rank)");
}

/// ||A x - A^T x|| <= 1e-10 ||A x|| for a random x (drawn in full on every rank), else
/// InvalidInput on every rank.
void check_symmetric(const DSparseTensor& a, uint64_t seed) {
  at::NoGradGuard no_grad;
  at::Generator gen = at::detail::createCPUGenerator(seed + 1);
  at::Tensor x = a.scatter(at::randn({a.rows()}, gen, at::TensorOptions().dtype(at::kDouble)));
  at::Tensor ax = a.matvec(x);
  at::Tensor sums = column_sums(a, at::stack({(ax - a.rmatvec(x)).pow(2), ax.pow(2)}, 1));
  const double diff = std::sqrt(sums[0].item<double>()), scale = std::sqrt(sums[1].item<double>());
  TESSERA_CHECK(diff <= 1e-10 * scale, InvalidInput, "eigsh: A is not symmetric (||A x - A^T x|| = ", diff,
                " with ||A x|| = ", scale, " for a random x)");
}

/// A - σ I with the diagonal added to the pattern where absent (each rank its rows).
DSparseTensor shifted(const DSparseTensor& a, double sigma) {
  const HaloPlan& plan = a.plan();
  const int64_t owned = a.owned_rows();
  at::Tensor owned_global = plan.local_to_global.narrow(0, 0, owned);
  at::Tensor rows = at::cat({a.local_rows_index(), at::arange(owned, at::kLong)});
  at::Tensor cols = at::cat({plan.local_to_global.index_select(0, a.local_cols_index()), owned_global});
  at::Tensor vals = at::cat({a.values().detach().to(at::kDouble), at::full({owned}, -sigma, at::kDouble)});
  return DSparseTensor::from_local_rows(a.comm(), a.partition(),
                                        SparseTensor::from_coo(vals, rows, cols, owned, a.rows()));
}

/// Dense eigensolver for small n: op applied to the identity, the rows gathered on every
/// rank, the wanted pairs first; vectors are this rank's rows.
detail::RitzPairs dense_pairs(const DSparseTensor& a, const detail::BlockOperator& op, const detail::LanczosParams& p,
                              const detail::LanczosSpace& space) {
  const int64_t n = a.rows();
  at::Tensor m = a.gather_all(op(space.local(at::eye(n, at::kDouble))));   // op's matrix, [n, n]
  detail::RitzPairs out = detail::dense_ritz_pairs(m, p);
  out.vectors = space.local(out.vectors);
  return out;
}

/// The entry of largest magnitude of each column of V over all ranks, [1, k] (ties: the lowest
/// rank's, which for contiguous rows is the first in global order).
at::Tensor largest_entries_over_ranks(const DSparseTensor& a, const at::Tensor& v) {
  const int64_t k = v.size(1);
  at::Tensor mine = v.size(0) > 0 ? detail::largest_entries_local(v) : at::zeros({1, k}, at::kDouble);
  std::vector<int64_t> ones(a.comm()->size(), 1);
  at::Tensor all = a.comm()->all_gather(mine.contiguous(), ones);   // [ranks, k]
  return detail::largest_entries_local(all);                        // [1, k]
}

EigshResult failed(const DSparseTensor& a, int64_t k, EigshInfo info) {
  return detail::failed_eigsh(a.owned_rows(), k, a.values().options(), std::move(info));
}

}  // namespace

EigshResult deigsh(const DSparseTensor& a, const EigshOptions& options) {
  check_inputs(a, options);
  const DSparseTensor a64 = a.with_values(a.values().detach().to(at::kDouble));
  check_symmetric(a64, options.seed);
  const int64_t n = a.rows(), k = options.k;
  const detail::LanczosSpace space = detail::distributed_lanczos_space(a64);
  const detail::LanczosParams p = detail::lanczos_params(options, n, /*single_vector=*/false);
  const bool dense = p.ncv + p.block > n;
  EigshInfo info;
  info.backend = dense ? "native (dense)" : to_string(EigshBackend::Native);
  detail::BlockOperator op;
  if (options.which == Which::Nearest) {
    TESSERA_CHECK(options.solver_backend == Backend::Auto || options.solver_backend == Backend::Mumps, Unsupported,
                  "eigsh across ranks factorises A - sigma I with MUMPS; solver backend '",
                  to_string(options.solver_backend), "' is single-process");
    detail::DistFactorOptions fo;
    fo.allow_singular = true;
    std::shared_ptr<detail::DistDirectFactorization> factor =
        detail::factorize_distributed_mumps(shifted(a64, options.sigma), fo);   // A - σ I = L U (collective)
    if (factor->null_pivots() > 0) {
      info.status = SolveStatus::Singular;
      info.message = "eigsh: A - sigma I is singular (MUMPS found " + std::to_string(factor->null_pivots()) +
                     " null pivots): sigma = " + std::to_string(options.sigma) + " is (numerically) an eigenvalue";
      return failed(a, k, info);
    }
    op = [factor](const at::Tensor& x) { return factor->solve(x, false); };   // (A - σ I)^{-1} X
  } else {
    op = [a64](const at::Tensor& x) {
      at::NoGradGuard no_grad;
      return a64.matvec(x);                                                  // A X
    };
  }
  detail::RitzPairs pairs = dense ? dense_pairs(a64, op, p, space) : detail::block_lanczos(op, n, p, &space);
  info.iterations = pairs.iterations;
  info.operator_applications = pairs.applications;
  if (!pairs.theta.defined()) {
    info.status = SolveStatus::NotConverged;
    info.message = pairs.message;
    return failed(a, k, info);
  }
  auto [lambda, vectors] = detail::sorted_eigenpairs(pairs, options, [&a64](const at::Tensor& v) {
    return largest_entries_over_ranks(a64, v);
  });
  // true Ritz residuals with A: ||A v_i - λ_i v_i|| over all rows
  at::Tensor av;
  {
    at::NoGradGuard no_grad;
    av = a64.matvec(vectors);
  }
  detail::set_ritz_info(info, column_sums(a64, (av - vectors * lambda.unsqueeze(0)).pow(2)).sqrt(), pairs);
  auto [l, v] = detail::deigsh_autograd(a64, a.values(), lambda, vectors);
  return {l, v, info};
}

}  // namespace tessera::sla
