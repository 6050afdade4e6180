// Single-vector SpMV plans (CSR and stencil forms), row balancing, the csr_spmm fast path,
// the fused CG loop and the O(nnz) property scan, against the float64 reference product.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "sla/backends/native/krylov.h"
#include "sla/kernels/csr_kernels.h"
#include "sla/kernels/spmv.h"
#include "sla/kernels/stencil_rows.h"
#include "tessera/core/error.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/solve.h"
#include "tessera/sla/sparse_tensor.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

using detail::SpmvPlan;

/// Random rows x cols CSR with about `density` filled and every third row empty.
SparseTensor random_rectangular(int64_t rows, int64_t cols, double density, uint64_t seed) {
  at::manual_seed(seed);
  at::Tensor d = at::randn({rows, cols}, at::kDouble) * (at::rand({rows, cols}, at::kDouble) < density).to(at::kDouble);
  d.index_put_({at::arange(0, rows, 3)}, 0.0);
  return SparseTensor::from_dense(d);
}

/// y = A x by the ATen reference kernel.
at::Tensor reference(const at::Tensor& rp, const at::Tensor& ci, const at::Tensor& v, const at::Tensor& x, int64_t rows) {
  return detail::csr_spmm_reference(rp, ci, {}, v.reshape({1, -1}), x.reshape({1, -1, 1}), rows).reshape({rows});
}

TEST(Spmv, CsrPlanMatchesReferenceInt32AndInt64NonSquareEmptyRows) {
  for (auto shape : {std::pair<int64_t, int64_t>{37, 53}, {64, 29}, {300, 300}}) {
    auto a = random_rectangular(shape.first, shape.second, 0.15, 7);
    at::Tensor v = a.values(), x = at::randn({a.cols()}, at::kDouble);
    at::Tensor ref = reference(a.row_ptr(), a.col_idx(), v, x, a.rows());
    for (auto itype : {at::kInt, at::kLong}) {
      for (int threads : {1, 3}) {
        SpmvPlan plan(a.row_ptr().to(itype), a.col_idx().to(itype), v, a.rows(), a.cols(), SpmvFormat::Csr, threads);
        at::Tensor y = at::full({a.rows()}, 7.0, at::kDouble);   // every entry overwritten, empty rows too
        plan.apply(x, y);
        EXPECT_TRUE(at::allclose(y, ref, 1e-14, 1e-14)) << itype << " threads " << threads;
        EXPECT_EQ(plan.threads(), threads);
      }
    }
  }
}

TEST(Spmv, ThreadsDoNotChangeTheResultAndApplyDotIsTheInnerProduct) {
  auto a = testing::random_matrix(200, 0.05, 1.0, false, 11);
  at::Tensor x = at::randn({200}, at::kDouble), y1 = at::empty({200}, at::kDouble), y4 = at::empty({200}, at::kDouble);
  SpmvPlan one(a.row_ptr(), a.col_idx(), a.values(), 200, 200, SpmvFormat::Csr, 1);
  SpmvPlan four(a.row_ptr(), a.col_idx(), a.values(), 200, 200, SpmvFormat::Csr, 4);
  one.apply(x, y1);
  const double dot = four.apply_dot(x, y4);
  EXPECT_TRUE(at::equal(y1, y4));
  EXPECT_NEAR(dot, at::dot(x, y1).item<double>(), 1e-12 * std::abs(dot) + 1e-14);
}

TEST(Spmv, BalancedBlocksCoverTheRowsInOrder) {
  // rows 0..9 with 0, 0, 100, 1, 1, 1, 0, 50, 0, 1 nonzeros
  at::Tensor rp = at::tensor({0, 0, 0, 100, 101, 102, 103, 103, 153, 153, 154}, at::kInt);
  for (int t : {1, 2, 3, 7}) {
    auto b = detail::balance_rows(rp, t);
    ASSERT_EQ(static_cast<int>(b.size()), t + 1);
    EXPECT_EQ(b.front(), 0);
    EXPECT_EQ(b.back(), 10);
    for (int i = 0; i < t; ++i) EXPECT_LE(b[i], b[i + 1]);
  }
  auto two = detail::balance_rows(rp, 2);
  EXPECT_EQ(two[1], 3);   // the 100-entry row ends the first half
}

TEST(Spmv, StencilFormIsDetectedAndBitwiseEqualToCsr) {
  for (auto a : {poisson2d(13), poisson3d(6)}) {
    auto s = detail::detect_stencil(a.row_ptr(), a.col_idx(), a.values(), a.rows());
    ASSERT_TRUE(s.found());
    EXPECT_EQ(s.offsets.size(), a.rows() == 169 ? 5u : 7u);
    EXPECT_TRUE(std::is_sorted(s.offsets.begin(), s.offsets.end()));
    at::Tensor x = at::randn({a.rows()}, at::kDouble), ys = at::empty_like(x), yc = at::empty_like(x);
    SpmvPlan stencil(a.row_ptr(), a.col_idx(), a.values(), a.rows(), a.cols(), SpmvFormat::Auto, 3);
    SpmvPlan csr(a.row_ptr(), a.col_idx(), a.values(), a.rows(), a.cols(), SpmvFormat::Csr, 2);
    ASSERT_TRUE(stencil.uses_stencil());
    EXPECT_STREQ(stencil.format_name(), "stencil");
    EXPECT_LT(stencil.bytes_per_apply(), csr.bytes_per_apply() / 3);
    const double d = stencil.apply_dot(x, ys);
    csr.apply(x, yc);
    EXPECT_TRUE(at::equal(ys, yc));
    EXPECT_TRUE(at::allclose(yc, reference(a.row_ptr(), a.col_idx(), a.values(), x, a.rows()), 1e-14, 1e-14));
    EXPECT_NEAR(d, at::dot(x, yc).item<double>(), 1e-12 * std::abs(d));
  }
}

/// Rows [r0, r1) of a stencil product by `stencil_rows` (AVX2 where the processor has it) and
/// by the row-by-row loop must agree bit for bit, y and <x, y>.
template <int ND>
void expect_stencil_rows_agree(const detail::StencilForm& s, const at::Tensor& x, int64_t r0, int64_t r1) {
  const detail::StencilTaps<ND, double> taps(s);
  at::Tensor yv = at::full_like(x, 7.0), ys = at::full_like(x, 7.0);
  const double dv = detail::stencil_rows<ND, true>(taps, x.data_ptr<double>(), yv.data_ptr<double>(), r0, r1);
  const double ds = detail::stencil_rows_scalar<ND, true>(taps, x.data_ptr<double>(), ys.data_ptr<double>(), r0, r1);
  EXPECT_TRUE(at::equal(yv, ys)) << "rows " << r0 << ".." << r1;
  EXPECT_EQ(dv, ds) << "rows " << r0 << ".." << r1;
}

TEST(Spmv, StencilRowsInVectorsAreTheRowByRowProductBitForBit) {
  // 2D (5 diagonals) and 3D (7) Poisson and a 3-diagonal form (any count): inner groups of four
  // rows, groups with a boundary row, ranges starting off the four-row grid, tails of 0-3 rows
  at::manual_seed(11);
  at::Tensor dense = at::zeros({23, 23}, at::kDouble);
  for (int i = 0; i < 23; ++i) {
    dense[i][i] = 2.5;
    if (i >= 3) dense[i][i - 3] = -0.75;
    if (i + 1 < 23 && i % 5 != 4) dense[i][i + 1] = 1.25;
  }
  const auto tri = SparseTensor::from_dense(dense);
  for (const auto& a : {poisson2d(13), poisson3d(6), tri}) {
    const auto s = detail::detect_stencil(a.row_ptr(), a.col_idx(), a.values(), a.rows());
    ASSERT_TRUE(s.found());
    const at::Tensor x = at::randn({a.rows()}, at::kDouble);
    for (int64_t r0 : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{6}}) {
      for (int64_t r1 : {a.rows(), a.rows() - 1, a.rows() - 2, a.rows() - 3, r0 + 3}) {
        if (s.offsets.size() == 5) expect_stencil_rows_agree<5>(s, x, r0, r1);
        if (s.offsets.size() == 7) expect_stencil_rows_agree<7>(s, x, r0, r1);
        expect_stencil_rows_agree<0>(s, x, r0, r1);
      }
    }
  }
}

TEST(Spmv, StencilOnANonSquareMatrixAndRejectionOfNonStencils) {
  // 4 x 6 with diagonals 0 (value 2) and +2 (value -1), row 1 missing its +2 entry
  at::Tensor dense = at::zeros({4, 6}, at::kDouble);
  for (int i = 0; i < 4; ++i) dense[i][i] = 2.0;
  for (int i : {0, 2, 3}) dense[i][i + 2] = -1.0;
  auto a = SparseTensor::from_dense(dense);
  SpmvPlan plan(a.row_ptr(), a.col_idx(), a.values(), 4, 6);
  ASSERT_TRUE(plan.uses_stencil());
  at::Tensor x = at::randn({6}, at::kDouble), y = at::empty({4}, at::kDouble);
  plan.apply(x, y);
  EXPECT_TRUE(at::equal(y, at::matmul(dense, x)));
  auto r = testing::random_matrix(30, 0.3, 1.0, false, 5);   // many diagonals, varying values
  EXPECT_FALSE(detail::detect_stencil(r.row_ptr(), r.col_idx(), r.values(), 30).found());
  EXPECT_THROW(SpmvPlan(r.row_ptr(), r.col_idx(), r.values(), 30, 30, SpmvFormat::Stencil), tessera::InvalidInput);
  at::Tensor v = poisson2d(5).values().clone();
  v[3] = -1.5;                                                // one entry off its diagonal's value
  auto p = poisson2d(5).with_values(v);
  EXPECT_FALSE(detail::detect_stencil(p.row_ptr(), p.col_idx(), p.values(), 25).found());
}

TEST(Spmv, Float32ValuesWithFloat64AccumulationAreExactForFloat32Numbers) {
  auto a = random_rectangular(80, 60, 0.2, 3);
  at::Tensor v32 = a.values().to(at::kFloat), v64 = v32.to(at::kDouble);
  at::Tensor x = at::randn({60}, at::kDouble), y32 = at::empty({80}, at::kDouble), y64 = at::empty({80}, at::kDouble);
  SpmvPlan mixed(a.row_ptr(), a.col_idx(), v32, 80, 60, SpmvFormat::Csr, 2);
  SpmvPlan exact(a.row_ptr(), a.col_idx(), v64, 80, 60, SpmvFormat::Csr, 2);
  mixed.apply(x, y32);
  exact.apply(x, y64);
  EXPECT_TRUE(at::equal(y32, y64));
  EXPECT_LT(mixed.bytes_per_apply(), exact.bytes_per_apply());
  EXPECT_STREQ(mixed.format_name(), "csr-f32values");
}

TEST(Spmv, CsrSpmmVectorFastPathMatchesReferenceForBatches) {
  auto a = random_rectangular(50, 40, 0.2, 9);
  at::Tensor v = at::randn({3, a.nnz()}, at::kDouble);
  for (int64_t bx : {1, 3}) {
    at::Tensor x = at::randn({bx, 40, 1}, at::kDouble);
    at::Tensor fast = detail::csr_spmm(a.row_ptr(), a.col_idx(), {}, v, x, 50);
    at::Tensor ref = detail::csr_spmm_reference(a.row_ptr(), a.col_idx(), {}, v, x, 50);
    EXPECT_TRUE(at::allclose(fast, ref, 1e-14, 1e-14));
  }
}

TEST(FusedCg, MatchesTheReferenceSolutionWithEveryPreconditioner) {
  auto a = poisson2d(24);
  at::manual_seed(2);
  at::Tensor b = at::randn({a.rows()}, at::kDouble);
  at::Tensor exact = at::linalg_solve(a.to_dense(), b);
  for (auto pre : {Preconditioner::None, Preconditioner::Jacobi}) {
    SolveOptions o;
    o.backend = Backend::Native;
    o.method = Method::CG;
    o.rtol = 1e-12;
    o.preconditioner = pre;
    auto [x, info] = solve(a, b, o);
    EXPECT_EQ(info.status, SolveStatus::Converged);
    EXPECT_GT(info.iterations, 10);
    EXPECT_LT(info.residual, 1e-12);
    EXPECT_LT((x - exact).norm().item<double>(), 1e-9 * exact.norm().item<double>());
  }
}

/// CG on `a` through its CSR operator: the operator, its SpMV plan and CG's parameters for
/// right-hand sides of norm `b_norm` (tolerance 1e-10 relative, at most 1000 iterations).
struct CgCase {
  detail::LinearOperator op;
  const detail::CsrOperator* csr = nullptr;
  detail::KrylovParams params;
  CgCase(const SparseTensor& a, double b_norm) : op(detail::csr_operator(a, 0, false)) {
    csr = op.target<detail::CsrOperator>();
    params.space = detail::KrylovSpace::local(a.rows());
    params.tol = 1e-10 * b_norm;
    params.maxiter = 1000;
  }
};

TEST(FusedCg, SameIteratesAsTheGenericLoop) {
  // Poisson's constant diagonal (Jacobi runs as M = I) and one that varies (the fused Jacobi step)
  at::manual_seed(3);
  const at::Tensor dense = poisson2d(20).to_dense();
  for (const SparseTensor& a : {SparseTensor::from_dense(dense),
                                SparseTensor::from_dense(dense + at::diag(at::rand({dense.size(0)}, at::kDouble)))}) {
    at::Tensor b = at::randn({a.rows()}, at::kDouble), x0 = at::zeros_like(b);
    CgCase cg(a, b.norm().item<double>());
    ASSERT_NE(cg.csr, nullptr);
    const auto none = detail::KrylovPreconditioner::identity();
    const auto jacobi = detail::KrylovPreconditioner::diagonal(a.diagonal().reciprocal());
    const auto set_up = detail::KrylovPreconditioner::set_up(
        [&](const at::Tensor& r) { return r * jacobi.inv_diag; });   // a non-diagonal-path M
    for (const detail::KrylovPreconditioner* m : {&none, &jacobi, &set_up}) {
      cg.params.plan = nullptr;
      auto generic = detail::run_cg(cg.op, *m, b, x0, cg.params);
      cg.params.plan = cg.csr->plan.get();
      auto fused = detail::run_cg(cg.op, *m, b, x0, cg.params);
      EXPECT_EQ(fused.status, SolveStatus::Converged);
      EXPECT_NEAR(static_cast<double>(fused.iterations), static_cast<double>(generic.iterations), 1.0);
      EXPECT_LT((fused.x - generic.x).norm().item<double>(), 1e-8 * generic.x.norm().item<double>());
    }
  }
}

TEST(FusedCg, ConstantJacobiDiagonalRunsAsTheUnpreconditionedLoop) {
  // M^{-1} = I / 12 (not a power of two: scaling by it rounds) gives CG's x without M, bit for bit
  auto a = SparseTensor::from_dense(poisson2d(20).to_dense() * 3.0);
  at::manual_seed(4);
  at::Tensor b = at::randn({a.rows()}, at::kDouble), x0 = at::zeros_like(b);
  CgCase cg(a, b.norm().item<double>());
  ASSERT_NE(cg.csr, nullptr);
  cg.params.plan = cg.csr->plan.get();
  const auto none = detail::KrylovPreconditioner::identity();
  const auto jacobi = detail::KrylovPreconditioner::diagonal(a.diagonal().reciprocal());
  ASSERT_TRUE(at::equal(jacobi.inv_diag, at::full_like(jacobi.inv_diag, 1.0 / 12.0)));
  auto plain = detail::run_cg(cg.op, none, b, x0, cg.params);
  auto scaled = detail::run_cg(cg.op, jacobi, b, x0, cg.params);
  EXPECT_EQ(scaled.status, SolveStatus::Converged);
  EXPECT_EQ(scaled.iterations, plain.iterations);
  EXPECT_TRUE(at::equal(scaled.x, plain.x));
}

TEST(Properties, SinglePassScanFindsAsymmetryInPatternOrValues) {
  auto p = detect_properties(poisson2d(20));
  EXPECT_TRUE(p.symmetric && p.positive_diagonal && p.diagonally_dominant);
  at::Tensor d = at::tensor({4.0, -1.0, 0.0, -1.0, 4.0, -1.0, 0.0, -1.0, 4.0}, at::kDouble).reshape({3, 3});
  EXPECT_TRUE(detect_properties(SparseTensor::from_dense(d)).symmetric);
  at::Tensor values = d.clone();
  values[0][1] = -1.1;                                          // same pattern, other value
  EXPECT_FALSE(detect_properties(SparseTensor::from_dense(values)).symmetric);
  at::Tensor pattern = d.clone();
  pattern[0][2] = 0.5;                                          // a_02 without a_20
  auto q = detect_properties(SparseTensor::from_dense(pattern));
  EXPECT_FALSE(q.symmetric);
  EXPECT_TRUE(q.positive_diagonal);
  at::Tensor nodiag = d.clone();
  nodiag[1][1] = 0.0;                                           // missing diagonal entry
  auto r = detect_properties(SparseTensor::from_dense(nodiag));
  EXPECT_FALSE(r.positive_diagonal);
  EXPECT_FALSE(r.diagonally_dominant);
  EXPECT_TRUE(r.symmetric);
}

TEST(Properties, TransposedPatternByCountingSortMatchesTranspose) {
  auto a = random_rectangular(23, 31, 0.3, 4);
  const auto& tp = a.transposed_pattern();
  at::Tensor dense_t = a.to_dense().t();
  auto t = SparseTensor::from_dense(dense_t.contiguous());
  EXPECT_TRUE(at::equal(tp.row_ptr.to(at::kLong), t.row_ptr().to(at::kLong)));
  EXPECT_TRUE(at::equal(tp.col_idx.to(at::kLong), t.col_idx().to(at::kLong)));
  EXPECT_TRUE(at::equal(a.values().index_select(0, tp.perm), t.values()));
}

}  // namespace
}  // namespace tessera::sla
