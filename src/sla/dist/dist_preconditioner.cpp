// DistPreconditioner: block-Jacobi and BoomerAMG for distributed Krylov solves, set up once.

#include "sla/dist/dist_preconditioner.h"

#include <ATen/ATen.h>

#include <tuple>
#include <utility>

#include "sla/backend_lookup.h"
#include "tessera/core/error.h"
#include "tessera/sla/backends/direct_backend.h"
#include "tessera/sla/solve.h"
#if TESSERA_WITH_HYPRE
#include "sla/backends/hypre/dist_boomeramg.h"
#endif

namespace tessera::sla::detail {
namespace {

// Block-Jacobi: this rank's diagonal block factorised by the preferred Cholesky backend
// (CHOLMOD, else Eigen) when it looks SPD, by the preferred LU backend (UMFPACK, SuperLU,
// Eigen) otherwise or when Cholesky fails. M^{-1} r = A_rr^{-1} r, M^{-T} r = A_rr^{-T} r, both
// from the same factors.
std::pair<LinearOperator, LinearOperator> block_jacobi(const DSparseTensor& a) {
  const SparseTensor& block = a.interior();
  if (block.rows() == 0) {
    LinearOperator identity = [](const at::Tensor& r) { return r.clone(); };
    return {identity, identity};
  }
  CsrMatrix csr = block.to_csr_matrix();
  std::shared_ptr<Factorization> factor;
  const Backend cholesky = preferred_direct_backend(Method::Cholesky);
  if (cholesky != Backend::Auto && detect_properties(block).spd_candidate()) {
    factor = make_direct_backend(cholesky)->factorize(csr, Method::Cholesky);
  }
  if (!factor || factor->status() != SolveStatus::Converged) {
    const Backend lu = preferred_direct_backend(Method::LU);
    TESSERA_CHECK(lu != Backend::Auto, NotCompiled, "block-Jacobi: no direct LU backend is compiled into this build");
    factor = make_direct_backend(lu)->factorize(csr, Method::LU);
  }
  TESSERA_CHECK(factor->status() == SolveStatus::Converged, InvalidInput, "block-Jacobi: the diagonal block of rank ",
                a.comm()->rank(), " is ", to_string(factor->status()), " (", factor->message(), ")");
  const auto dtype = a.values().scalar_type();
  auto apply = [factor, dtype](bool transpose) -> LinearOperator {
    return [factor, dtype, transpose](const at::Tensor& r) {
      return factor->solve(r.to(at::kDouble), transpose).to(dtype);  // z = A_rr^{-1} r (or A_rr^{-T} r)
    };
  };
  return {apply(false), apply(true)};
}

}  // namespace

std::shared_ptr<DistPreconditioner> DistPreconditioner::build(const DSparseTensor& a, const SolveOptions& options) {
  switch (options.preconditioner) {
    case Preconditioner::None:
    case Preconditioner::Jacobi:
      return nullptr;
    case Preconditioner::BlockJacobi:
    case Preconditioner::BoomerAMG:
      break;
    default:
      TESSERA_THROW(Unsupported, "preconditioner '", to_string(options.preconditioner),
                    "' has no distributed form; distributed solves take none, jacobi, block-jacobi or boomeramg");
  }
#if !TESSERA_WITH_HYPRE
  TESSERA_CHECK(options.preconditioner != Preconditioner::BoomerAMG, NotCompiled,
                "the BoomerAMG preconditioner needs hypre, which is not compiled into this build");
#endif
  std::shared_ptr<DistPreconditioner> pc(new DistPreconditioner(a, options));
  if (options.preconditioner == Preconditioner::BlockJacobi) {
    std::tie(pc->forward_, pc->transposed_) = block_jacobi(a);
  } else {
    pc->forward_ = pc->make_boomeramg(/*transpose=*/false);
  }
  return pc;
}

const LinearOperator* DistPreconditioner::op(bool transpose) {
  if (!transpose) return &forward_;
  if (options_.preconditioner == Preconditioner::BlockJacobi) return &transposed_;
  // CG and MINRES assume A = A^T: the V-cycle of A is the V-cycle of A^T
  if (options_.method == Method::CG || options_.method == Method::MINRES) return &forward_;
  std::call_once(transposed_once_, [this] { transposed_ = make_boomeramg(/*transpose=*/true); });
  return &transposed_;
}

bool distributed_boomeramg_available() {
#if TESSERA_WITH_HYPRE
  return true;
#else
  return false;
#endif
}

LinearOperator DistPreconditioner::make_boomeramg(bool transpose) const {
#if TESSERA_WITH_HYPRE
  return make_distributed_boomeramg(a_, transpose);
#else
  TESSERA_THROW(NotCompiled, "the BoomerAMG preconditioner needs hypre, which is not compiled into this build");
#endif
}

}  // namespace tessera::sla::detail
