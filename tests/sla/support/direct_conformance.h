#pragma once
// One conformance harness for every direct backend x method (in the spirit of Eigen's
// test/sparse_solver.h): each backend's test file only says which methods it provides.
//
// For every matrix the method applies to, b = A 1 and
//   - ||A x - b|| / ||b|| < 1e-10 and, where well conditioned, x ~ 1;
//   - the transposed solve: ||A^T y - c|| / ||c|| < 1e-10 with c = A^T 1;
//   - k = 3 right-hand sides [n, 3] in one call, each column checked;
// and the numerical failures are statuses, not exceptions: Singular for LU (and LDLT) on
// singular matrices, NotPositiveDefinite for Cholesky on an indefinite one.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sla/support/test_matrices.h"
#include "tessera/sla/backends/direct_backend.h"

namespace tessera::sla::testing {

enum class Kind { Spd, SymmetricIndefinite, General };

struct NamedMatrix {
  std::string name;
  CsrMatrix a;
  Kind kind;
  bool well_conditioned;  // then x = 1 is also checked, not only the residual
};

inline bool applies(Method method, Kind kind) {
  if (method == Method::Cholesky) return kind == Kind::Spd;
  if (method == Method::LDLT) return kind != Kind::General;
  return true;  // LU: everything
}

/// The matrices of the suite: random (several sizes, fixed seed) and SuiteSparse files.
inline std::vector<NamedMatrix> conformance_matrices() {
  at::manual_seed(20261129);
  std::vector<NamedMatrix> list;
  for (int64_t n : {1, 7, 60, 250}) {
    const std::string s = std::to_string(n);
    list.push_back({"random_spd_" + s, random_spd(n, 4.0 / n), Kind::Spd, true});
    list.push_back({"random_sym_indefinite_" + s, random_symmetric_indefinite(n, 4.0 / n),
                    Kind::SymmetricIndefinite, true});
    list.push_back({"random_general_" + s, random_general(n, 4.0 / n), Kind::General, true});
  }
  list.push_back({"poisson2d_20", poisson2d(20), Kind::Spd, true});
  list.push_back({"poisson2d_convection_20", poisson2d(20, 0.3), Kind::General, true});
  // SuiteSparse matrices (conditions from data/matrices/README.md)
  list.push_back({"LFAT5", read_matrix_market(matrix_path("LFAT5.mtx")), Kind::Spd, false});
  list.push_back({"494_bus", read_matrix_market(matrix_path("494_bus.mtx")), Kind::Spd, false});
  list.push_back({"bcsstk13", read_matrix_market(matrix_path("bcsstk13.mtx")), Kind::Spd, false});
  list.push_back({"west0067", read_matrix_market(matrix_path("west0067.mtx")), Kind::General, false});
  list.push_back({"impcol_a", read_matrix_market(matrix_path("impcol_a.mtx")), Kind::General, false});
  list.push_back({"olm1000", read_matrix_market(matrix_path("olm1000.mtx")), Kind::General, false});
  return list;
}

inline constexpr double kResidualTolerance = 1e-10;

/// Solves with the factorisation and checks the plain, transposed and multi-RHS solves.
inline void check_solves(const Factorization& f, const NamedMatrix& m) {
  const int64_t n = m.a.rows;
  const at::Tensor ones = at::ones({n}, at::kDouble);
  const at::Tensor b = csr_apply(m.a, ones, false);  // b = A 1
  const at::Tensor x = f.solve(b, false);
  ASSERT_EQ(x.sizes(), b.sizes());
  EXPECT_LT(relative_residual(m.a, x, b, false), kResidualTolerance);
  if (m.well_conditioned) EXPECT_LT((x - ones).abs().max().item<double>(), 1e-8);
  const at::Tensor c = csr_apply(m.a, ones, true);  // c = A^T 1
  const at::Tensor y = f.solve(c, true);
  EXPECT_LT(relative_residual(m.a, y, c, true), kResidualTolerance) << "transposed solve";
  // [n, k] right-hand sides made from known solutions, B = A X (and C = A^T X), so the
  // residual relative to ||b|| measures backward error also on ill-conditioned matrices
  const at::Tensor xs = at::randn({n, 3}, at::kDouble);
  const at::Tensor bk = csr_apply(m.a, xs, false);
  const at::Tensor xk = f.solve(bk, false);
  ASSERT_EQ(xk.sizes(), bk.sizes());
  EXPECT_LT(relative_residual(m.a, xk, bk, false), kResidualTolerance) << "[n, 3] solve";
  if (m.well_conditioned) EXPECT_LT((xk - xs).abs().max().item<double>(), 1e-8);
  const at::Tensor ck = csr_apply(m.a, xs, true);
  const at::Tensor yk = f.solve(ck, true);
  EXPECT_LT(relative_residual(m.a, yk, ck, true), kResidualTolerance) << "[n, 3] transposed solve";
  if (m.well_conditioned) EXPECT_LT((yk - xs).abs().max().item<double>(), 1e-8);
}

/// Every applicable matrix: factorise, expect Converged, check the solves.
inline void run_conformance(const std::string& backend_name, Method method) {
  auto backend = make_direct_backend(backend_name);
  ASSERT_TRUE(backend->supports(method));
  for (const NamedMatrix& m : conformance_matrices()) {
    if (!applies(method, m.kind)) continue;
    SCOPED_TRACE(backend_name + " " + to_string(method) + " on " + m.name);
    auto f = backend->factorize(m.a, method);
    ASSERT_EQ(f->status(), SolveStatus::Converged) << f->message();
    EXPECT_EQ(f->method(), method);
    EXPECT_EQ(f->backend(), backend_name);
    check_solves(*f, m);
  }
}

/// 3 x 3 with a zero row dependency: row 3 = row 1 + row 2.
inline CsrMatrix tiny_singular() {
  return csr_from_dense(at::tensor({1.0, 2.0, 0.0, 0.0, 1.0, 3.0, 1.0, 3.0, 3.0}, at::kDouble).reshape({3, 3}));
}

/// Rank n - 2 and PSD, with rounding in every entry: A = M M^T, M random n x (n - 2).
/// No pivot comes out exactly zero, so this exercises the condition-estimate check
/// (measured: rcond estimates 1e-18 .. 3e-18 from Eigen, SuperLU, UMFPACK).
inline CsrMatrix rank_deficient(int64_t n) {
  at::manual_seed(7);
  at::Tensor m = at::randn({n, n - 2}, at::kDouble);
  at::Tensor a = at::matmul(m, m.t());
  return csr_from_dense(0.5 * (a + a.t()));
}

/// Singular matrices give status Singular (never an exception, never NaN), and solving
/// with the failed factorisation throws InvalidInput.
inline void run_singular_checks(const std::string& backend_name, Method method) {
  auto backend = make_direct_backend(backend_name);
  std::vector<NamedMatrix> singular = {
      {"dwt_878_unit", read_matrix_market(matrix_path("dwt_878.mtx"), true), Kind::SymmetricIndefinite, false},
  };
  if (method == Method::LU) singular.push_back({"tiny_singular", tiny_singular(), Kind::General, false});
  singular.push_back({"rank_deficient_20", rank_deficient(20), Kind::Spd, false});
  for (const NamedMatrix& m : singular) {
    SCOPED_TRACE(backend_name + " " + to_string(method) + " on " + m.name);
    auto f = backend->factorize(m.a, method);
    EXPECT_EQ(f->status(), SolveStatus::Singular) << f->message();
    EXPECT_FALSE(f->message().empty());
    EXPECT_THROW(f->solve(at::ones({m.a.rows}, at::kDouble), false), tessera::InvalidInput);
  }
}

/// Cholesky on symmetric indefinite matrices reports NotPositiveDefinite.
inline void run_indefinite_checks(const std::string& backend_name) {
  auto backend = make_direct_backend(backend_name);
  for (const NamedMatrix& m : conformance_matrices()) {
    if (m.kind != Kind::SymmetricIndefinite || m.a.rows < 2) continue;
    SCOPED_TRACE(backend_name + " cholesky on " + m.name);
    auto f = backend->factorize(m.a, Method::Cholesky);
    EXPECT_EQ(f->status(), SolveStatus::NotPositiveDefinite) << f->message();
    EXPECT_FALSE(f->message().empty());
  }
  // dwt_878 with unit values is symmetric and indefinite (and singular)
  auto f = backend->factorize(read_matrix_market(matrix_path("dwt_878.mtx"), true), Method::Cholesky);
  EXPECT_NE(f->status(), SolveStatus::Converged);
  // bcsstk13 - sigma I with sigma = mean diagonal: indefinite, large enough for CHOLMOD's
  // supernodal path (where a failed pivot stops the factorisation at L->minor)
  CsrMatrix shifted = read_matrix_market(matrix_path("bcsstk13.mtx"));
  shifted.values = shifted.values.clone();
  const auto* rp = shifted.row_ptr.data_ptr<int64_t>();
  const auto* ci = shifted.col_idx.data_ptr<int64_t>();
  auto* v = shifted.values.data_ptr<double>();
  double mean_diagonal = 0.0;
  for (int64_t i = 0; i < shifted.rows; ++i) {
    for (int64_t p = rp[i]; p < rp[i + 1]; ++p) mean_diagonal += ci[p] == i ? v[p] / shifted.rows : 0.0;
  }
  for (int64_t i = 0; i < shifted.rows; ++i) {
    for (int64_t p = rp[i]; p < rp[i + 1]; ++p) v[p] -= ci[p] == i ? mean_diagonal : 0.0;
  }
  auto h = backend->factorize(shifted, Method::Cholesky);
  EXPECT_EQ(h->status(), SolveStatus::NotPositiveDefinite) << h->message();
  // a rank-deficient PSD matrix is not usable either: a non-positive pivot
  // (NotPositiveDefinite) or the condition estimate (Singular), never Converged
  auto g = backend->factorize(rank_deficient(20), Method::Cholesky);
  EXPECT_NE(g->status(), SolveStatus::Converged);
  EXPECT_FALSE(g->message().empty());
}

}  // namespace tessera::sla::testing
