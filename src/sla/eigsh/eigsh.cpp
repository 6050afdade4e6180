// eigsh(A, options): input checks, the operator (A or (A - σ I)^{-1}), the engine, the
// back-transformation of Ritz values, residuals with A, and the differentiable result.

#include "tessera/sla/eigsh.h"

#include <ATen/ATen.h>

#include <limits>
#include <memory>

#include "sla/autograd/eigsh_function.h"
#include "sla/batch_solver.h"
#include "sla/eigsh/eigenpairs.h"
#include "sla/eigsh/end_shift.h"
#include "sla/eigsh/lanczos.h"
#include "sla/kernels/csr_kernels.h"
#include "sla/kernels/spmv.h"
#include "tessera/core/error.h"

namespace tessera::sla {

const char* to_string(Which which) {
  switch (which) {
    case Which::Largest: return "largest";
    case Which::Smallest: return "smallest";
    case Which::Nearest: return "nearest";
  }
  return "?";
}

const char* to_string(EigshBackend backend) {
  switch (backend) {
    case EigshBackend::Auto: return "auto";
    case EigshBackend::Native: return "native";
    case EigshBackend::Spectra: return "spectra";
    case EigshBackend::Lanczos: return "lanczos";
  }
  return "?";
}

EigshBackend parse_eigsh_backend(const std::string& name) {
  for (EigshBackend b : {EigshBackend::Auto, EigshBackend::Native, EigshBackend::Spectra, EigshBackend::Lanczos}) {
    if (name == to_string(b)) return b;
  }
  TESSERA_THROW(InvalidInput, "eigsh: unknown backend '", name, "' (auto, native, spectra, lanczos)");
}

namespace {

void check_inputs(const SparseTensor& a, const EigshOptions& o) {
  TESSERA_CHECK(a.rows() == a.cols(), DimensionMismatch, "eigsh: A must be square, got ", a.rows(), " x ", a.cols());
  TESSERA_CHECK(a.rows() > 1 && a.nnz() > 0, InvalidInput, "eigsh: A is empty or 1 x 1 (", a.rows(), " x ",
                a.cols(), ", ", a.nnz(), " stored entries)");
  TESSERA_CHECK(a.batch_size() == 1 && a.values().dim() == 1, Unsupported,
                "eigsh: one matrix at a time (values [nnz]); use SparseTensorList or a loop for batches");
  TESSERA_CHECK(o.k >= 1 && o.k < a.rows(), InvalidInput, "eigsh: k = ", o.k, " must be in [1, n) with n = ",
                a.rows());
  TESSERA_CHECK(o.tol > 0, InvalidInput, "eigsh: tol must be > 0");
  TESSERA_CHECK(at::isfinite(a.values().detach()).all().item<bool>(), InvalidInput,
                "eigsh: A's values contain NaN or Inf");
}

/// ||A - A^T||_max <= 1e-10 ||A||_max, else InvalidInput.
void check_symmetric(const SparseTensor& a) {
  const detail::TransposedPattern& tp = a.transposed_pattern();
  at::Tensor v = a.values().detach();
  const bool same_pattern = at::equal(tp.row_ptr.to(at::kLong), a.row_ptr().to(at::kLong)) &&
                            at::equal(tp.col_idx.to(at::kLong), a.col_idx().to(at::kLong));
  const double scale = v.abs().max().item<double>();
  const double diff = same_pattern ? (v.index_select(0, tp.perm) - v).abs().max().item<double>() : scale;
  TESSERA_CHECK(diff <= 1e-10 * scale, InvalidInput, "eigsh: A is not symmetric (max |a_ij - a_ji| = ", diff,
                " with max |a_ij| = ", scale, ")");
}

/// Dense eigensolver for small n: the Ritz pairs of op's matrix, wanted ones first.
detail::RitzPairs dense_pairs(const detail::BlockOperator& op, int64_t n, const detail::LanczosParams& p) {
  return detail::dense_ritz_pairs(op(at::eye(n, at::kDouble)), p);
}

/// The engine Auto stands for: tessera's single-vector `lanczos` for the ends of the
/// spectrum of a CPU matrix when n exceeds the native Krylov space (it locks the converged
/// pairs and searches the deflated operator from random starts, so it finds every copy of a
/// multiple eigenvalue, and it was faster than Spectra and SciPy's ARPACK at n = 10^4:
/// bench/RESULTS.md); the native block Lanczos for shift-invert, off the CPU and for small n
/// (its dense path).
EigshBackend resolve_backend(const SparseTensor& a, const EigshOptions& o) {
  if (o.backend != EigshBackend::Auto) return o.backend;
  const detail::LanczosParams native = detail::lanczos_params(o, a.rows(), /*single_vector=*/false);
  const bool ends = o.which == Which::Largest || o.which == Which::Smallest;
  const bool krylov = native.ncv + native.block <= a.rows();
  if (!ends || !krylov || !a.values().device().is_cpu()) return EigshBackend::Native;
  return EigshBackend::Lanczos;
}

/// Auto at an end of the spectrum after the run on A spent its budget (`on_a`): the Lanczos
/// method on (A - σ I)^{-1} with σ beyond the wanted end (end_shift.h), whose largest Ritz
/// values 1/(λ - σ) belong to the wanted eigenvalues. Its Ritz values are returned as those
/// of (A - σ I)^{-1} (θ = 1/(λ - σ), negated from those of (σ I - A)^{-1} for the largest), and
/// `sort_options` becomes Which::Nearest at σ, so that λ = σ + 1/θ. When no shift can be
/// factorised, the run on A goes on without the budget. Products of both runs are counted.
detail::RitzPairs shift_invert_at_end(const SparseTensor& a64, const EigshOptions& options,
                                      const detail::LanczosParams& p, const detail::VectorOperator& a_op,
                                      detail::RitzPairs on_a, EigshInfo& info, EigshOptions& sort_options) {
  const int64_t n = a64.rows();
  detail::EndShift shift = detail::factor_beyond_end(a64, options.which, on_a.last_ritz_values, options.solver_backend);
  detail::RitzPairs out;
  if (shift.factor) {
    std::shared_ptr<detail::BatchSolver> factor = shift.factor;
    detail::VectorOperator inverse = detail::one_column(
        [factor](const at::Tensor& x) {
          SolveInfo si;
          return factor->solve(x.unsqueeze(0), false, si)[0];   // B^{-1} x
        },
        n);
    detail::LanczosParams q = p;
    q.order = detail::RitzOrder::LargestAlgebraic;   // B positive definite: 1/|λ - σ| largest
    out = detail::thick_restart_lanczos(inverse, n, q);
    if (out.theta.defined() && options.which == Which::Largest) out.theta = -out.theta;   // B = σ I - A
    info.shift_invert = true;
    info.sigma = shift.sigma;
    sort_options.which = Which::Nearest;
    sort_options.sigma = shift.sigma;
  } else {
    out = detail::thick_restart_lanczos(a_op, n, p);
  }
  out.iterations += on_a.iterations;
  out.applications += on_a.applications;
  const std::string why = "the run on A did not converge in its budget of " + std::to_string(on_a.applications) +
                          " products; shifts tried: " + shift.tried;
  out.message = out.message.empty() ? why : out.message + " (" + why + ")";
  return out;
}

EigshResult failed(const SparseTensor& a, int64_t k, EigshInfo info) {
  return detail::failed_eigsh(a.rows(), k, a.values().options(), std::move(info));
}

}  // namespace

EigshResult eigsh(const SparseTensor& a, const EigshOptions& options) {
  check_inputs(a, options);
  check_symmetric(a);
  const int64_t n = a.rows(), k = options.k;
  const SparseTensor a64 = a.with_values(a.values().detach().to(at::kDouble));
  const EigshBackend backend = resolve_backend(a, options);
  const bool single_vector = backend == EigshBackend::Spectra || backend == EigshBackend::Lanczos;
  EigshInfo info;
  detail::BlockOperator op;
  std::shared_ptr<detail::BatchSolver> factor;
  if (options.which == Which::Nearest) {
    info.shift_invert = true;
    info.sigma = options.sigma;
    SolveOptions so;
    so.backend = options.solver_backend;
    factor = std::make_shared<detail::BatchSolver>(detail::shifted(a64, options.sigma), so);   // A - σ I = L U (or L L^T)
    SolveInfo probe;
    factor->solve(at::ones({1, n, 1}, at::kDouble), false, probe);
    if (probe.status != SolveStatus::Converged) {
      info.backend = to_string(backend);
      info.status = SolveStatus::Singular;
      info.message = "eigsh: A - sigma I could not be factorised (" + std::string(to_string(probe.status)) +
                     "): sigma = " + std::to_string(options.sigma) + " is (numerically) an eigenvalue; " + probe.message;
      return failed(a, k, info);
    }
    op = [factor](const at::Tensor& x) {
      SolveInfo si;
      return factor->solve(x.unsqueeze(0), false, si)[0];   // (A - σ I)^{-1} X
    };
  } else {
    at::Tensor rp = a64.row_ptr(), ci = a64.col_idx(), vals = a64.values().unsqueeze(0);
    op = [rp, ci, vals, n](const at::Tensor& x) {
      return detail::csr_spmm(rp, ci, {}, vals, x.unsqueeze(0), n)[0];   // A X
    };
  }
  const detail::LanczosParams p = detail::lanczos_params(options, n, single_vector);
  // one vector at a time: straight on the prepared CSR kernel for A (nothing allocated per
  // product), through op's tensors for (A - σ I)^{-1}
  std::unique_ptr<detail::SpmvPlan> plan;
  detail::VectorOperator vector_op;
  if (single_vector && options.which != Which::Nearest && a64.values().is_cpu()) {
    plan = std::make_unique<detail::SpmvPlan>(a64.row_ptr(), a64.col_idx(), a64.values(), n, n, SpmvFormat::Csr);
    vector_op = [&plan](const double* x, double* y) { plan->apply(x, y); };   // y = A x
  } else if (single_vector) {
    vector_op = detail::one_column(op, n);
  }
  detail::RitzPairs pairs;
  EigshOptions sort_options = options;   // Which::Nearest and σ when shift-invert ran
  if (backend == EigshBackend::Spectra) {
    info.backend = to_string(backend);
    pairs = detail::spectra_lanczos(vector_op, n, p);
  } else if (backend == EigshBackend::Lanczos && p.ncv < n) {
    info.backend = to_string(backend);
    // Auto at an end: the run on A gets about what shift-invert would cost (0: unlimited)
    const bool auto_end = options.backend == EigshBackend::Auto && options.which != Which::Nearest;
    detail::LanczosParams limited = p;
    limited.max_applications = auto_end ? detail::shift_invert_budget(a64, p.ncv, options.solver_backend) : 0;
    pairs = detail::thick_restart_lanczos(vector_op, n, limited);
    if (!pairs.converged && limited.max_applications > 0 && pairs.applications >= limited.max_applications) {
      pairs = shift_invert_at_end(a64, options, p, vector_op, std::move(pairs), info, sort_options);
    }
  } else if (p.ncv + p.block > n) {
    info.backend = "native (dense)";
    pairs = dense_pairs(op, n, p);
  } else {
    info.backend = to_string(EigshBackend::Native);
    pairs = detail::block_lanczos(op, n, p);
  }
  info.iterations = pairs.iterations;
  info.operator_applications = pairs.applications;
  if (!pairs.theta.defined()) {
    info.status = SolveStatus::NotConverged;
    info.message = pairs.message;
    return failed(a, k, info);
  }
  auto [lambda, vectors] = detail::sorted_eigenpairs(pairs, sort_options, detail::largest_entries_local);
  // true Ritz residuals with A: ||A v_i - λ_i v_i||
  at::Tensor av = detail::csr_spmm(a64.row_ptr(), a64.col_idx(), {}, a64.values().unsqueeze(0),
                                   vectors.unsqueeze(0), n)[0];
  detail::set_ritz_info(info, (av - vectors * lambda.unsqueeze(0)).norm(2, {0}), pairs);
  auto [l, v] = detail::eigsh_autograd(a64, a.values(), lambda, vectors);
  return {l, v, info};
}

}  // namespace tessera::sla
