// NativePreconditioner: builds AMG / IC(0) / ILU(0) / BoomerAMG once and hands out M^{-1}.

#include "sla/precond/native_preconditioner.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "sla/precond/amg.h"
#include "sla/precond/incomplete_factor.h"
#include "tessera/core/error.h"
#include "tessera/sla/preconditioners.h"
#if TESSERA_WITH_HYPRE
#include "sla/backends/hypre/boomeramg.h"
#endif

namespace tessera::sla::detail {

bool NativePreconditioner::handles(Preconditioner kind) {
  return kind == Preconditioner::AMG || kind == Preconditioner::IC0 || kind == Preconditioner::ILU0 ||
         kind == Preconditioner::BoomerAMG;
}

bool NativePreconditioner::available(Preconditioner kind) {
#if TESSERA_WITH_HYPRE
  return handles(kind);
#else
  return handles(kind) && kind != Preconditioner::BoomerAMG;
#endif
}

std::shared_ptr<NativePreconditioner> NativePreconditioner::build(const CsrData& a, const SolveOptions& options,
                                                                  bool symmetric) {
  TESSERA_CHECK(handles(options.preconditioner), InvalidInput, "no set-up preconditioner '",
                to_string(options.preconditioner), "'");
  auto pc = std::make_shared<NativePreconditioner>();
  pc->a_ = a;
  pc->options_ = options;
  pc->symmetric_ = symmetric;
  pc->forward_ = pc->make_op(a, false);
  return pc;
}

const LinearOperator& NativePreconditioner::op(bool transpose) {
  // symmetric A (and IC(0), symmetric by construction): M^{-T} = M^{-1}
  if (!transpose || symmetric_ || options_.preconditioner == Preconditioner::IC0) return forward_;
  std::call_once(transposed_once_, [this] {
    if (options_.preconditioner == Preconditioner::ILU0) {                   // M^{-T} from the same factors
      transposed_ = make_op(a_, true);
    } else {
      transposed_ = make_op(csr_transpose(a_), false);                      // set-up on A^T
    }
  });
  return transposed_;
}

LinearOperator NativePreconditioner::make_op(const CsrData& a, bool transpose_factor) {
  char line[400];
  switch (options_.preconditioner) {
    case Preconditioner::AMG: {
      TESSERA_CHECK(options_.amg.cycle != AmgCycle::K || options_.method == Method::CG, InvalidInput,
                    "the AMG K-cycle is a nonlinear preconditioner for (flexible) CG only; use the V or W cycle with ",
                    to_string(options_.method));
      auto h = std::make_shared<AmgHierarchy>(build_amg(a, options_.amg));
      const AmgSetupSeconds& s = h->setup_seconds;
      std::snprintf(line, sizeof line,
                    "amg (%s-cycle): %zu levels, coarsest %lld rows, operator complexity %.3f, %.1f bytes per row "
                    "held (P, coarse operators, D^-1); set-up s: spectrum %.2f, aggregation %.2f, prolongator %.2f, "
                    "galerkin %.2f, coarse inverse %.2f",
                    options_.amg.cycle == AmgCycle::V ? "V" : options_.amg.cycle == AmgCycle::W ? "W" : "K",
                    h->levels().size(),
                    static_cast<long long>(h->levels().back().a.rows), h->operator_complexity(),
                    static_cast<double>(h->bytes()) / static_cast<double>(std::max<int64_t>(a.rows, 1)), s.spectrum,
                    s.aggregation, s.prolongator, s.galerkin, s.coarse_inverse);
      summary_ = line;
      summary_ += "; rows (entries per row) per level:";                 // the coarsening, level by level
      for (const AmgLevel& level : h->levels()) {
        std::snprintf(line, sizeof line, " %lld (%.1f)", static_cast<long long>(level.a.rows),
                      static_cast<double>(level.a.nnz()) / static_cast<double>(std::max<int64_t>(level.a.rows, 1)));
        summary_ += line;
      }
      return IntoOperator{[h](const at::Tensor& r, at::Tensor& z) { h->vcycle(r, z); },   // z = cycle(r), into z
                          [h](const at::Tensor& r, at::Tensor& z, at::Tensor& scratch) { h->vcycle(r, z, &scratch); }};
    }
    case Preconditioner::IC0:
    case Preconditioner::ILU0: {
      auto f = std::make_shared<IncompleteFactor>(options_.preconditioner == Preconditioner::IC0
                                                      ? incomplete_cholesky0(a)
                                                      : incomplete_lu0(a));
      if (f->status != SolveStatus::Converged) {
        status_ = f->status;
        message_ = f->message;
      }
      summary_ = std::string(to_string(options_.preconditioner)) + ": " + std::to_string(f->factor.nnz()) +
                 " stored factor entries";
      return [f, transpose_factor](const at::Tensor& r) { return f->apply(r, transpose_factor); };
    }
    case Preconditioner::BoomerAMG: {
#if TESSERA_WITH_HYPRE
      summary_ = "boomeramg (hypre)";
      return make_boomeramg(a);
#else
      TESSERA_THROW(NotCompiled, "the BoomerAMG preconditioner needs hypre, which is not compiled into this build");
#endif
    }
    default:
      TESSERA_THROW(InvalidInput, "no set-up preconditioner '", to_string(options_.preconditioner), "'");
  }
}

PreconditionerSetup NativePreconditioner::timed_setup(const CsrData& a, const SolveOptions& options, bool symmetric) {
  const auto t0 = std::chrono::steady_clock::now();
  auto pc = build(a, options, symmetric);
  PreconditionerSetup out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.summary = pc->summary();
  out.status = pc->status();
  out.message = pc->message();
  return out;
}

}  // namespace tessera::sla::detail

namespace tessera::sla {

PreconditionerSetup setup_preconditioner(const SparseTensor& a, const SolveOptions& options) {
  return detail::NativePreconditioner::timed_setup(detail::csr_of(a, 0), options, /*symmetric=*/true);
}

}  // namespace tessera::sla
