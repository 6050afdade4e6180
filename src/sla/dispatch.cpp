// choose_solver: the dispatch rule documented in solve.h.

#include <ATen/ATen.h>

#include <algorithm>

#include "tessera/core/error.h"
#include "tessera/sla/backends/direct_backend.h"
#include "tessera/sla/backends/iterative_backend.h"
#include "tessera/sla/solve.h"
#include "sla/backend_lookup.h"

namespace tessera::sla {
namespace {

Method native_method(const MatrixProperties& props) {
  if (props.spd_candidate()) return Method::CG;
  return props.symmetric ? Method::MINRES : Method::BiCGStab;
}

/// A direct method the named backend supports, chosen from the properties.
Method direct_method(const DirectBackend& backend, const MatrixProperties& props) {
  if (props.spd_candidate() && backend.supports(Method::Cholesky)) return Method::Cholesky;
  if (backend.supports(Method::LU)) return Method::LU;
  if (props.symmetric && backend.supports(Method::LDLT)) return Method::LDLT;
  TESSERA_THROW(Unsupported, "backend '", backend.name(), "' has no method for this matrix (",
                props.symmetric ? "symmetric" : "non-symmetric", ")");
}

SolverChoice choose_auto(const SparseTensor& a, const MatrixProperties& props, const SolveOptions& options) {
  const bool spd = props.spd_candidate();
  if (is_krylov(options.method)) return {Backend::Native, options.method, false};
  const bool lu = !spd;
  const bool fits = estimated_factor_bytes(a, lu) <= options.memory_budget_bytes;
  if (a.values().is_cpu() && (fits || options.method != Method::Auto)) {
    const Method m = options.method != Method::Auto ? options.method : (spd ? Method::Cholesky : Method::LU);
    const Backend direct = detail::preferred_direct_backend(m);
    if (direct != Backend::Auto) return {direct, m, options.method == Method::Auto};
    TESSERA_CHECK(options.method == Method::Auto, NotCompiled, "no direct backend providing ",
                  to_string(options.method), " is compiled into this build");
  }
  return {Backend::Native, native_method(props), true};
}

}  // namespace

SolverChoice choose_solver(const SparseTensor& a, const MatrixProperties& props, const SolveOptions& options) {
  const Backend named = options.backend;
  if (named == Backend::Auto) return choose_auto(a, props, options);
  TESSERA_CHECK(named != Backend::Mumps, Unsupported,
                "backend 'mumps' is the distributed direct solve: use dsolve on a DSparseTensor (under mpirun)");
  if (named == Backend::Native) {
    TESSERA_CHECK(options.method == Method::Auto || is_krylov(options.method), Unsupported,
                  "the native backend is iterative: use cg, bicgstab, gmres or minres, not ",
                  to_string(options.method));
    if (options.method != Method::Auto) return {Backend::Native, options.method, false};
    return {Backend::Native, native_method(props), true};
  }
  if (is_krylov(options.method)) {
    const bool has_iterative = named == Backend::Eigen;   // the iterative backends besides native
    TESSERA_CHECK(has_iterative, Unsupported, "backend '", to_string(named), "' is direct; method ",
                  to_string(options.method), " needs backend native (or eigen for cg/bicgstab)");
    auto backend = make_iterative_backend(named);   // NotCompiled when absent
    TESSERA_CHECK(backend->supports(options.method), Unsupported, to_string(named), " has no iterative method ",
                  to_string(options.method));
    return {named, options.method, false};
  }
  auto backend = detail::direct_backend(named);             // NotCompiled / InvalidInput
  if (options.method != Method::Auto) {
    TESSERA_CHECK(backend->supports(options.method), Unsupported, "backend '", to_string(named),
                  "' does not provide ", to_string(options.method));
    return {named, options.method, false};
  }
  return {named, direct_method(*backend, props), true};
}

}  // namespace tessera::sla
