#pragma once
// One conformance harness for every iterative backend x method x preconditioner (the
// iterative counterpart of direct_conformance.h). A combination claims a matrix class when
// the backend provides the method and the preconditioner (IterativeBackend::supports) and
// the mathematics allow it (claims() below). On every small matrix of a claimed class:
//   - float64 through the interface: the prepared solver solves A x = b and the adjoint
//     A^T y = c, status Converged, true relative residual <= rtol, reported residual true;
//   - float32 through solve(): Converged, ||A x - b|| / ||b|| within rtol (1e-5) plus the
//     rounding of x to float32;
//   - the gradient of <w, x> in A's values and b against a central difference along a
//     direction that keeps A's class (symmetric stays symmetric);
//   - one iteration on an unreachable tolerance: NotConverged (a status, x finite), never an exception or NaN.
// Outside the claims (CG on non-SPD, MINRES on non-symmetric) a status is reported and a
// Converged status is true: x finite and the residual met.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sla/support/test_matrices.h"
#include "tessera/sla/backends/iterative_backend.h"
#include "tessera/sla/solve.h"

namespace tessera::sla::testing {

enum class MatrixClass { Spd, SymmetricIndefinite, Nonsymmetric };

inline const char* class_name(MatrixClass c) {
  return c == MatrixClass::Spd ? "spd" : c == MatrixClass::SymmetricIndefinite ? "symmetric-indefinite" : "nonsymmetric";
}

/// What the mathematics allow: CG needs SPD A, MINRES symmetric A and an SPD M; AMG and
/// IC(0) are built for SPD A; ILU(0) gives a non-symmetric M (BiCGStab, GMRES only).
inline bool claims(Method method, Preconditioner pc, MatrixClass c) {
  const bool symmetric_method = method == Method::CG || method == Method::MINRES;
  if (method == Method::CG && c != MatrixClass::Spd) return false;
  if (method == Method::MINRES && c == MatrixClass::Nonsymmetric) return false;
  switch (pc) {
    case Preconditioner::None:
    case Preconditioner::Jacobi: return true;
    case Preconditioner::AMG:
    case Preconditioner::IC0: return c == MatrixClass::Spd;
    case Preconditioner::BoomerAMG: return c == MatrixClass::Spd && method != Method::MINRES;   // M not symmetric
    case Preconditioner::ILU0: return !symmetric_method;
    case Preconditioner::BlockJacobi: return false;   // distributed solves only
  }
  return false;
}

struct ClassMatrix {
  std::string name;
  SparseTensor a;   // float64
  MatrixClass kind;
};

/// Dense n x n with ~density random off-diagonal entries (fixed seed), made strictly
/// diagonally dominant with the given sign pattern of the diagonal: well conditioned.
inline SparseTensor dominant(int64_t n, double density, bool symmetric, bool alternating_sign, uint64_t seed) {
  at::manual_seed(seed);
  at::Tensor s = at::randn({n, n}, at::kDouble) * (at::rand({n, n}, at::kDouble) < density).to(at::kDouble);
  if (symmetric) s = s + s.t();
  s.fill_diagonal_(0.0);
  at::Tensor d = at::maximum(s.abs().sum(1), s.abs().sum(0)) + 1.0;   // |a_ii| > row and column sums
  if (alternating_sign) d.index_put_({at::arange(1, n, 2)}, -d.index({at::arange(1, n, 2)}));
  return SparseTensor::from_dense(s + at::diag(d));
}

inline SparseTensor to_sparse(const CsrMatrix& a) {
  return SparseTensor::from_csr(a.row_ptr, a.col_idx, a.values, a.rows, a.cols);
}

inline std::vector<ClassMatrix> class_matrices() {
  return {
      {"poisson2d_6", to_sparse(poisson2d(6)), MatrixClass::Spd},
      {"dominant_spd_30", dominant(30, 0.15, true, false, 1), MatrixClass::Spd},
      {"dominant_symmetric_indefinite_30", dominant(30, 0.15, true, true, 2), MatrixClass::SymmetricIndefinite},
      {"convection_diffusion_6", to_sparse(poisson2d(6, 0.3)), MatrixClass::Nonsymmetric},
      {"dominant_nonsymmetric_30", dominant(30, 0.15, false, false, 3), MatrixClass::Nonsymmetric},
  };
}

inline const std::vector<Method> kKrylovMethods = {Method::CG, Method::BiCGStab, Method::GMRES, Method::MINRES};
inline const std::vector<Preconditioner> kPreconditioners = {
    Preconditioner::None, Preconditioner::Jacobi, Preconditioner::AMG, Preconditioner::IC0,
    Preconditioner::ILU0, Preconditioner::BoomerAMG, Preconditioner::BlockJacobi};

inline double true_residual(const SparseTensor& a, const at::Tensor& x, const at::Tensor& b, bool transpose) {
  at::Tensor dense = a.to_dense().to(at::kDouble);
  at::Tensor ax = at::matmul(transpose ? dense.t() : dense, x.to(at::kDouble));
  return ((ax - b.to(at::kDouble)).norm() / b.to(at::kDouble).norm()).item<double>();
}

/// A direction in A's values that keeps A's class: dv_k = a_k cos(i_k + j_k), symmetric in (i, j).
inline at::Tensor class_preserving_direction(const SparseTensor& a) {
  const CsrMatrix csr = a.to_csr_matrix();
  at::Tensor rows = at::repeat_interleave(at::arange(a.rows(), at::kLong), csr.row_ptr.diff());
  return csr.values * at::cos((rows + csr.col_idx).to(at::kDouble));
}

inline SolveOptions options_for(Backend backend, Method method, Preconditioner pc, double rtol) {
  SolveOptions o;
  o.backend = backend;
  o.method = method;
  o.preconditioner = pc;
  o.rtol = rtol;
  return o;
}

/// Forward and adjoint solves in float64 through the prepared solver.
inline void check_float64_solves(const IterativeBackend& backend, const ClassMatrix& m, const SolveOptions& o) {
  at::manual_seed(5);
  const at::Tensor b = at::randn({m.a.rows()}, at::kDouble);
  auto solver = backend.prepare(m.a, 0, o);
  for (bool transpose : {false, true}) {
    SCOPED_TRACE(transpose ? "adjoint A^T y = c" : "A x = b");
    IterativeResult r = solver->solve(b, transpose, o.method);
    ASSERT_EQ(r.info.status, SolveStatus::Converged) << r.info.message;
    const double residual = true_residual(m.a, r.x, b, transpose);
    EXPECT_LE(residual, 1.5 * o.rtol);
    EXPECT_NEAR(r.info.residual, residual, 1e-3 * o.rtol + 1e-15);   // the reported residual is the true one
  }
}

/// float32 through solve(): the requested rtol, plus what rounding x to float32 costs.
inline void check_float32_solve(const ClassMatrix& m, const SolveOptions& o) {
  const SparseTensor a32 = m.a.with_values(m.a.values().to(at::kFloat));
  at::manual_seed(6);
  const at::Tensor b = at::randn({m.a.rows()}, at::kFloat);
  auto [x, info] = solve(a32, b, o);
  ASSERT_EQ(info.status, SolveStatus::Converged) << info.message;
  EXPECT_EQ(x.scalar_type(), at::kFloat);
  EXPECT_LE(true_residual(m.a, x, b, false), o.rtol + 1e-5);
}

/// d<w, x>/d(values, b) along (dv, db) against (f(+h) - f(-h)) / 2h.
inline void check_gradient(const ClassMatrix& m, const SolveOptions& o) {
  at::manual_seed(7);
  const at::Tensor b = at::randn({m.a.rows()}, at::kDouble), w = at::randn({m.a.rows()}, at::kDouble);
  const at::Tensor dv = class_preserving_direction(m.a), db = at::randn({m.a.rows()}, at::kDouble);
  at::Tensor v = m.a.values().clone().requires_grad_(), bb = b.clone().requires_grad_();
  auto [x, info] = solve(m.a.with_values(v), bb, o);
  ASSERT_EQ(info.status, SolveStatus::Converged) << info.message;
  (x * w).sum().backward();
  const double analytic = ((v.grad() * dv).sum() + (bb.grad() * db).sum()).item<double>();
  const double h = 1e-5;
  auto f = [&](double t) {
    auto [xt, it] = solve(m.a.with_values(m.a.values() + t * dv), b + t * db, o);
    EXPECT_EQ(it.status, SolveStatus::Converged) << it.message;
    return (xt * w).sum().item<double>();
  };
  const double numeric = (f(h) - f(-h)) / (2 * h);
  EXPECT_NEAR(analytic, numeric, 1e-6 * (1.0 + std::abs(numeric)));
}

/// maxiter = 1 on an unreachable tolerance: NotConverged, x finite, no exception.
inline void check_not_converged_is_a_status(const ClassMatrix& m, SolveOptions o) {
  o.rtol = 1e-30;
  o.maxiter = 1;
  auto [x, info] = solve(m.a, at::ones({m.a.rows()}, at::kDouble), o);
  EXPECT_EQ(info.status, SolveStatus::NotConverged) << info.message;
  EXPECT_FALSE(info.message.empty());
  EXPECT_TRUE(at::isfinite(x).all().item<bool>());
}

/// Outside the claims: whatever the status, a Converged one is true.
inline void check_honest_outside_claims(const ClassMatrix& m, const SolveOptions& o) {
  const at::Tensor b = at::ones({m.a.rows()}, at::kDouble);
  auto [x, info] = solve(m.a, b, o);
  if (info.status == SolveStatus::Converged) {
    EXPECT_TRUE(at::isfinite(x).all().item<bool>());
    EXPECT_LE(true_residual(m.a, x, b, false), 1.5 * o.rtol);
  } else {
    EXPECT_FALSE(info.message.empty()) << to_string(info.status);
  }
}

/// Every method x preconditioner the backend provides, on every matrix: the checks above
/// where the combination claims the matrix's class. Returns how many combinations ran.
inline int run_iterative_conformance(Backend backend_id) {
  auto backend = make_iterative_backend(backend_id);
  int claimed = 0;
  for (const ClassMatrix& m : class_matrices()) {
    for (Method method : kKrylovMethods) {
      if (!backend->supports(method)) continue;
      for (Preconditioner pc : kPreconditioners) {
        if (!backend->supports(pc)) continue;
        SCOPED_TRACE(std::string(to_string(backend_id)) + " " + to_string(method) + " " + to_string(pc) + " on " +
                     m.name + " (" + class_name(m.kind) + ")");
        if (!claims(method, pc, m.kind)) {
          if (pc == Preconditioner::None || pc == Preconditioner::Jacobi) {
            check_honest_outside_claims(m, options_for(backend_id, method, pc, 1e-10));
          }
          continue;
        }
        ++claimed;
        check_float64_solves(*backend, m, options_for(backend_id, method, pc, 1e-10));
        check_float32_solve(m, options_for(backend_id, method, pc, 1e-5));
        check_gradient(m, options_for(backend_id, method, pc, 1e-13));
        check_not_converged_is_a_status(m, options_for(backend_id, method, pc, 1e-10));
      }
    }
  }
  return claimed;
}

}  // namespace tessera::sla::testing
