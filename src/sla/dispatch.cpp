// choose_solver: the dispatch rule documented in solve.h.

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>

#include "tessera/core/error.h"
#include "tessera/sla/backends/direct_backend.h"
#include "tessera/sla/backends/iterative_backend.h"
#include "tessera/sla/solve.h"
#include "sla/backend_lookup.h"

namespace tessera::sla {
namespace {

bool is_krylov(Method m) { return m == Method::CG || m == Method::BiCGStab || m == Method::GMRES || m == Method::MINRES; }

double memory_budget_bytes() {
  if (const char* env = std::getenv("TESSERA_SOLVE_MEMORY_BUDGET")) {
    const double v = std::atof(env);
    if (v > 0) return v;
  }
  return 2.0 * 1024 * 1024 * 1024;
}

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
  if (is_krylov(options.method)) return {"native", options.method, false};
  const bool lu = !spd;
  const bool fits = estimated_factor_bytes(a, lu) <= memory_budget_bytes();
  if (a.values().is_cpu() && (fits || options.method != Method::Auto)) {
    const Method m = options.method != Method::Auto ? options.method : (spd ? Method::Cholesky : Method::LU);
    const std::string name = detail::preferred_direct_backend(m);
    if (!name.empty()) return {name, m, options.method == Method::Auto};
    TESSERA_CHECK(options.method == Method::Auto, NotCompiled, "no direct backend providing ",
                  to_string(options.method), " is compiled into this build");
  }
  return {"native", native_method(props), true};
}

}  // namespace

SolverChoice choose_solver(const SparseTensor& a, const MatrixProperties& props, const SolveOptions& options) {
  const std::string& name = options.backend;
  if (name == "auto") return choose_auto(a, props, options);
  if (name == "native") {
    TESSERA_CHECK(options.method == Method::Auto || is_krylov(options.method), Unsupported,
                  "the native backend is iterative: use cg, bicgstab, gmres or minres, not ",
                  to_string(options.method));
    if (options.method != Method::Auto) return {"native", options.method, false};
    return {"native", native_method(props), true};
  }
  if (name == "eigen" && is_krylov(options.method)) {
    auto backend = make_iterative_backend("eigen");   // NotCompiled when absent
    TESSERA_CHECK(backend->supports(options.method), Unsupported, "eigen has no iterative method ",
                  to_string(options.method));
    return {"eigen", options.method, false};
  }
  TESSERA_CHECK(!is_krylov(options.method), Unsupported, "backend '", name, "' is direct; method ",
                to_string(options.method), " needs backend native (or eigen for cg/bicgstab)");
  auto backend = detail::direct_backend(name);             // NotCompiled / InvalidInput
  if (options.method != Method::Auto) {
    TESSERA_CHECK(backend->supports(options.method), Unsupported, "backend '", name, "' does not provide ",
                  to_string(options.method));
    return {name, options.method, false};
  }
  return {name, direct_method(*backend, props), true};
}

}  // namespace tessera::sla
