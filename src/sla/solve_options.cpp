#include "tessera/sla/solve_options.h"

#include "tessera/core/error.h"

namespace tessera::sla {

const char* to_string(Backend backend) {
  switch (backend) {
    case Backend::Auto: return "auto";
    case Backend::Native: return "native";
    case Backend::Eigen: return "eigen";
    case Backend::Cholmod: return "cholmod";
    case Backend::Umfpack: return "umfpack";
    case Backend::Superlu: return "superlu";
    case Backend::Mumps: return "mumps";
  }
  return "unknown";
}

bool is_krylov(Method m) {
  return m == Method::CG || m == Method::BiCGStab || m == Method::GMRES || m == Method::MINRES;
}

const char* to_string(Method method) {
  switch (method) {
    case Method::Auto: return "auto";
    case Method::Cholesky: return "cholesky";
    case Method::LDLT: return "ldlt";
    case Method::LU: return "lu";
    case Method::CG: return "cg";
    case Method::BiCGStab: return "bicgstab";
    case Method::GMRES: return "gmres";
    case Method::MINRES: return "minres";
  }
  return "unknown";
}

const char* to_string(SolveStatus status) {
  switch (status) {
    case SolveStatus::Converged: return "converged";
    case SolveStatus::NotConverged: return "not_converged";
    case SolveStatus::Singular: return "singular";
    case SolveStatus::Breakdown: return "breakdown";
    case SolveStatus::NotPositiveDefinite: return "not_positive_definite";
  }
  return "unknown";
}

SolveStatus worse_status(SolveStatus a, SolveStatus b) {
  auto rank = [](SolveStatus s) {
    switch (s) {
      case SolveStatus::Converged: return 0;
      case SolveStatus::NotConverged: return 1;
      case SolveStatus::Breakdown: return 2;
      case SolveStatus::NotPositiveDefinite: return 3;
      case SolveStatus::Singular: return 4;
    }
    return 5;
  };
  return rank(a) >= rank(b) ? a : b;
}

const char* to_string(Preconditioner preconditioner) {
  switch (preconditioner) {
    case Preconditioner::None: return "none";
    case Preconditioner::Jacobi: return "jacobi";
    case Preconditioner::BlockJacobi: return "block-jacobi";
    case Preconditioner::AMG: return "amg";
    case Preconditioner::IC0: return "ic0";
    case Preconditioner::ILU0: return "ilu0";
    case Preconditioner::BoomerAMG: return "boomeramg";
  }
  return "unknown";
}

Backend parse_backend(const std::string& name) {
  for (Backend b : {Backend::Auto, Backend::Native, Backend::Eigen, Backend::Cholmod, Backend::Umfpack,
                    Backend::Superlu, Backend::Mumps}) {
    if (name == to_string(b)) return b;
  }
  TESSERA_THROW(InvalidInput, "unknown backend '", name,
                "'; expected one of auto, native, eigen, cholmod, umfpack, superlu, mumps");
}

Preconditioner parse_preconditioner(const std::string& name) {
  for (Preconditioner p : {Preconditioner::None, Preconditioner::Jacobi, Preconditioner::BlockJacobi,
                           Preconditioner::AMG, Preconditioner::IC0, Preconditioner::ILU0,
                           Preconditioner::BoomerAMG}) {
    if (name == to_string(p)) return p;
  }
  TESSERA_THROW(InvalidInput, "unknown preconditioner '", name,
                "'; expected one of none, jacobi, block-jacobi, amg, ic0, ilu0, boomeramg");
}

Method parse_method(const std::string& name) {
  for (Method m : {Method::Auto, Method::Cholesky, Method::LDLT, Method::LU, Method::CG,
                   Method::BiCGStab, Method::GMRES, Method::MINRES}) {
    if (name == to_string(m)) return m;
  }
  TESSERA_THROW(InvalidInput, "unknown method '", name,
                "'; expected one of auto, cholesky, ldlt, lu, cg, bicgstab, gmres, minres");
}

}  // namespace tessera::sla
