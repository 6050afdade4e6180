// The matrix-free stencil path (stencil.h) and the memory of the AMG-CG solve: the stencil
// form against the CSR it stands for, the same hierarchy and solution bit for bit, the
// V-cycle on its reused vectors against the cycle that allocated fresh ones (its earlier
// code, kept here as the reference), and MemoryLedger bounds on bytes per unknown.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sla/kernels/spmv.h"
#include "sla/precond/amg.h"
#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/solve.h"
#include "tessera/sla/stencil.h"
#include "sla/support/amg_options.h"

namespace tessera::sla {
namespace {

using detail::AmgHierarchy;
using detail::AmgLevel;

using testing::amg_cg;

bool same_bits(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() && at::equal(a.contiguous(), b.contiguous());
}

bool same_csr(const detail::CsrData& a, const detail::CsrData& b) {
  return a.rows == b.rows && a.cols == b.cols && same_bits(a.row_ptr, b.row_ptr) && same_bits(a.col_idx, b.col_idx) &&
         same_bits(a.values, b.values);
}

// ---- the V-cycle as it was before its vectors were reused (fresh tensors every step)
at::Tensor ref_smooth(const AmgLevel& level, const AmgOptions& o, const at::Tensor& b, const at::Tensor& x0) {
  const double upper = level.lambda_max, lower = level.lambda_max / o.smoother_ratio;
  const double theta = 0.5 * (upper + lower), delta = 0.5 * (upper - lower);
  const double sigma = theta / delta;
  double rho = 1.0 / sigma;
  at::Tensor r = x0.defined() ? level.a.apply(x0).neg_().add_(b) : b.clone();
  r.mul_(level.inv_diag);
  at::Tensor d = r / theta;
  at::Tensor x = x0.defined() ? x0.add_(d) : d.clone();
  for (int k = 1; k < o.smoother_degree; ++k) {
    r.sub_(level.a.apply(d).mul_(level.inv_diag));
    const double rho_next = 1.0 / (2.0 * sigma - rho);
    d.mul_(rho_next * rho).add_(r, 2.0 * rho_next / delta);
    rho = rho_next;
    x.add_(d);
  }
  return x;
}

at::Tensor ref_cycle(const AmgHierarchy& h, const AmgOptions& o, size_t l, const at::Tensor& b) {
  const AmgLevel& level = h.levels()[l];
  if (l + 1 == h.levels().size()) {
    if (h.coarse_inverse().defined()) return at::mv(h.coarse_inverse(), b);
    return ref_smooth(level, o, b, ref_smooth(level, o, b, {}));
  }
  at::Tensor x = ref_smooth(level, o, b, {});
  at::Tensor rc = level.p.apply_transposed(level.a.apply(x).neg_().add_(b));
  at::Tensor ec = ref_cycle(h, o, l + 1, rc);
  x.add_(level.p.apply(ec));
  return ref_smooth(level, o, b, x);
}

TEST(Stencil, Poisson2dStencilIsTheDetectedFormOfPoisson2d) {
  for (int64_t n : {1, 2, 5, 33}) {
    const StencilMatrix s = poisson2d_stencil(n);
    const auto detected = stencil_of(poisson2d(n));
    ASSERT_TRUE(detected.has_value()) << n;
    EXPECT_EQ(s.offsets, detected->offsets) << n;
    EXPECT_EQ(s.coeffs, detected->coeffs) << n;
    EXPECT_TRUE(same_bits(s.mask, detected->mask)) << n;
    EXPECT_EQ(s.nnz(), poisson2d(n).nnz()) << n;
    const SparseTensor back = s.to_sparse();
    EXPECT_TRUE(same_bits(back.row_ptr(), poisson2d(n).row_ptr())) << n;
    EXPECT_TRUE(same_bits(back.col_idx(), poisson2d(n).col_idx())) << n;
    EXPECT_TRUE(same_bits(back.values(), poisson2d(n).values())) << n;
  }
  EXPECT_FALSE(stencil_of(variable_diffusion2d(8, {.sigma = 1.0, .seed = 1})).has_value());
}

TEST(Stencil, Poisson3dStencilIsTheDetectedFormOfPoisson3d) {
  for (int64_t n : {1, 2, 5, 9}) {
    const StencilMatrix s = poisson3d_stencil(n);
    const SparseTensor csr = poisson3d(n);
    const auto detected = stencil_of(csr);
    ASSERT_TRUE(detected.has_value()) << n;
    EXPECT_EQ(s.offsets, detected->offsets) << n;
    EXPECT_EQ(s.coeffs, detected->coeffs) << n;
    EXPECT_TRUE(same_bits(s.mask, detected->mask)) << n;
    const SparseTensor back = s.to_sparse();
    EXPECT_TRUE(same_bits(back.row_ptr(), csr.row_ptr())) << n;
    EXPECT_TRUE(same_bits(back.col_idx(), csr.col_idx())) << n;
    EXPECT_TRUE(same_bits(back.values(), csr.values())) << n;
  }
  // and its AMG-CG solve is the CSR's (3D: 7 diagonals in the mask)
  const SparseTensor csr = poisson3d(24);
  at::manual_seed(5);
  const at::Tensor b = at::rand({24 * 24 * 24}, at::kDouble);
  auto [xc, ic] = solve(csr, b, amg_cg(1e-8));
  auto [xs, is] = solve(poisson3d_stencil(24), b, amg_cg(1e-8));
  EXPECT_EQ(is.status, SolveStatus::Converged);
  EXPECT_EQ(ic.iterations, is.iterations);
  EXPECT_TRUE(same_bits(xc, xs));
}

TEST(Stencil, RejectsMalformedMatricesAndOptions) {
  StencilMatrix bad = poisson2d_stencil(4);
  bad.mask[0] = static_cast<uint8_t>(0x1f);                      // row 0 storing column -4
  EXPECT_THROW(solve(bad, at::ones({16}, at::kDouble), amg_cg()), Error);
  const StencilMatrix a = poisson2d_stencil(4);
  EXPECT_THROW(solve(a, at::ones({15}, at::kDouble), amg_cg()), Error);
  SolveOptions ic = amg_cg();
  ic.preconditioner = Preconditioner::IC0;
  EXPECT_THROW(solve(a, at::ones({16}, at::kDouble), ic), Error);
  EXPECT_THROW(solve(a, at::ones({16}, at::kDouble).requires_grad_(), amg_cg()), Error);
}

// The finest level read from the stencil gives the CSR's hierarchy bit for bit (P, coarse
// operators, lambda_max, D^-1's values), holding D^-1 as one broadcast value.
TEST(Stencil, MatrixFreeHierarchyIsTheCsrHierarchy) {
  const int64_t n = 150;
  const SparseTensor csr = poisson2d(n);
  const StencilMatrix s = poisson2d_stencil(n);
  detail::StencilForm form{s.offsets, s.coeffs, s.mask};
  const detail::CsrData mf = detail::csr_from_stencil(std::make_shared<const detail::SpmvPlan>(form));
  ASSERT_TRUE(mf.matrix_free());
  const AmgHierarchy hc = detail::build_amg(detail::csr_of(csr, 0), AmgOptions{});
  const AmgHierarchy hf = detail::build_amg(mf, AmgOptions{});
  ASSERT_EQ(hc.levels().size(), hf.levels().size());
  ASSERT_GE(hc.levels().size(), 3u);
  for (size_t l = 0; l < hc.levels().size(); ++l) {
    const AmgLevel &c = hc.levels()[l], &f = hf.levels()[l];
    EXPECT_EQ(c.lambda_max, f.lambda_max) << l;
    EXPECT_TRUE(at::equal(c.inv_diag, f.inv_diag.contiguous())) << l;
    if (l > 0) EXPECT_TRUE(same_csr(c.a, f.a)) << l;
    if (l + 1 < hc.levels().size()) EXPECT_TRUE(same_csr(c.p, f.p)) << l;
  }
  EXPECT_EQ(hf.levels()[0].inv_diag.stride(0), 0);               // one value, not one per row
  EXPECT_EQ(hc.operator_complexity(), hf.operator_complexity());
  EXPECT_EQ(hf.bytes(), hc.bytes() - (n * n - 1) * 8);
  EXPECT_TRUE(same_bits(hc.coarse_inverse(), hf.coarse_inverse()));
}

// The finest level's Galerkin product without A P or P^T stored is the two-product form bit
// for bit, on variable coefficients, unstructured rows and 3D.
TEST(Stencil, GalerkinProductWithoutStoredApIsTheTwoProductFormBitForBit) {
  for (const SparseTensor& m : {variable_diffusion2d(40, {.sigma = 2.0, .seed = 5}),
                                fe_laplacian2d(30, {.jitter = 0.3, .seed = 2}), poisson3d(12)}) {
    const detail::CsrData a = detail::csr_of(m, 0);
    const at::Tensor inv_diag = a.diagonal().reciprocal();
    std::vector<int64_t> agg;
    const int64_t coarse = detail::aggregate(a, AmgOptions{}.strength, agg);
    const detail::CsrData p = detail::smoothed_prolongator(a, inv_diag, 1.1 * detail::estimate_lambda_max(a, inv_diag, 12), agg, coarse);
    const detail::CsrData two = detail::csr_triple_product(detail::csr_transpose(p), a, p);
    EXPECT_TRUE(same_csr(detail::galerkin_product(a, p), two)) << m.rows();
  }
}

// The cycle on its reused vectors is the cycle that allocated fresh ones, bit for bit, on a
// CSR and on a matrix-free hierarchy, called again and again (the vectors keep nothing).
TEST(Stencil, ReusedCycleVectorsGiveTheFreshCycleBitForBit) {
  const SparseTensor csr = variable_diffusion2d(90, {.sigma = 1.5, .seed = 4});
  const AmgOptions o;
  const AmgHierarchy h = detail::build_amg(detail::csr_of(csr, 0), o);
  ASSERT_GE(h.levels().size(), 3u);
  at::Tensor z = at::empty({csr.rows()}, at::kDouble);
  for (int k = 0; k < 3; ++k) {
    at::manual_seed(10 + k);
    const at::Tensor r = at::randn({csr.rows()}, at::kDouble);
    const at::Tensor expected = ref_cycle(h, o, 0, r);
    h.vcycle(r, z);
    EXPECT_TRUE(same_bits(z, expected)) << k;
    EXPECT_TRUE(same_bits(h.vcycle(r), expected)) << k;
    at::Tensor scratch = at::full({csr.rows()}, 1e300, at::kDouble);   // whatever it held
    z.fill_(-7.0);
    h.vcycle(r, z, &scratch);
    EXPECT_TRUE(same_bits(z, expected)) << "with the caller's scratch, " << k;
  }
  at::Tensor bad = at::empty({csr.rows() - 1}, at::kDouble);
  EXPECT_THROW(h.vcycle(at::randn({csr.rows()}, at::kDouble), z, &bad), Error);
  EXPECT_THROW(h.vcycle(z, z), Error);
  EXPECT_GT(h.workspace_bytes(), 3 * csr.rows() * 8 - 1);
  // a repeated cycle allocates no vector of the finest level
  core::MemoryLedger::install();
  const at::Tensor r = at::randn({csr.rows()}, at::kDouble);
  h.vcycle(r, z);
  const int64_t before = core::MemoryLedger::current_bytes();
  core::MemoryLedger::reset_peak();
  h.vcycle(r, z);
  EXPECT_LT(core::MemoryLedger::peak_bytes() - before, csr.rows() * 8 / 4) << "the cycle allocated a fine vector";
}

// The solve of the stencil is the solve of its CSR: same iterations, residual and x bit for
// bit (AMG-CG, also Jacobi and no preconditioner).
TEST(Stencil, SolveEqualsTheCsrSolveBitForBit) {
  const int64_t n = 200;                                         // 40k rows: threaded products
  const SparseTensor csr = poisson2d(n);
  const StencilMatrix s = poisson2d_stencil(n);
  at::manual_seed(3);
  const at::Tensor b = at::rand({n * n}, at::kDouble);
  for (Preconditioner pk : {Preconditioner::AMG, Preconditioner::Jacobi, Preconditioner::None}) {
    SolveOptions o = amg_cg(1e-8);
    o.preconditioner = pk;
    if (pk != Preconditioner::AMG) o.maxiter = 2000;
    auto [xc, ic] = solve(csr, b, o);
    auto [xs, is] = solve(s, b, o);
    EXPECT_EQ(ic.status, SolveStatus::Converged) << to_string(pk);
    EXPECT_EQ(is.status, SolveStatus::Converged) << to_string(pk);
    EXPECT_EQ(ic.iterations, is.iterations) << to_string(pk);
    EXPECT_EQ(ic.residual, is.residual) << to_string(pk);
    EXPECT_TRUE(same_bits(xc, xs)) << to_string(pk);
    EXPECT_EQ(is.spmv_format, "stencil");
  }
  auto [xa, ia] = solve(s, b, SolveOptions{});                   // method auto: CG, Jacobi
  EXPECT_EQ(ia.method, Method::CG);
  EXPECT_EQ(ia.status, SolveStatus::Converged);
}

// Bytes per unknown of the AMG-CG solve of 2D Poisson, by the MemoryLedger, with b (and the
// matrix) allocated before: the stencil path holds the mask, x, CG's r, p, q, z, the
// hierarchy (67 B) and the cycle's vectors (the finest level's r; its d is CG's q): 125.6 B at
// 262k rows; 133.6 while the cycle held its own d. The CSR path's solve holds 9 B more (D^-1 per
// row, a second mask) above the CSR (64 B, the caller's): 134.6 B; ~169 B before the cycle reused
// its vectors, CG iterated in its own copy of x and the native solver held A's diagonal.
TEST(Stencil, AmgCgBytesPerUnknown) {
  // two threads, as measured: the restriction's scatter buffers are [threads, coarse rows]
  struct Threads {
    int saved = at::get_num_threads();
    Threads() { at::set_num_threads(std::min(saved, 2)); }
    ~Threads() { at::set_num_threads(saved); }
  } threads;
  core::MemoryLedger::install();
  const int64_t n = 512;
  const double rows = static_cast<double>(n * n);
  at::manual_seed(1);
  const at::Tensor b = at::rand({n * n}, at::kDouble);
  const SolveOptions o = amg_cg(1e-6);
  {
    const int64_t start = core::MemoryLedger::current_bytes();
    core::MemoryLedger::reset_peak();
    const StencilMatrix s = poisson2d_stencil(n);
    auto [x, info] = solve(s, b, o);
    ASSERT_EQ(info.status, SolveStatus::Converged);
    const double per_row = static_cast<double>(core::MemoryLedger::peak_bytes() - start) / rows;
    EXPECT_LT(per_row, 130.0) << "matrix-free AMG-CG, bytes per unknown above b";
    RecordProperty("stencil_bytes_per_row", std::to_string(per_row));
  }
  {
    const SparseTensor a = poisson2d(n);
    const int64_t start = core::MemoryLedger::current_bytes();
    core::MemoryLedger::reset_peak();
    auto [x, info] = solve(a, b, o);
    ASSERT_EQ(info.status, SolveStatus::Converged);
    const double per_row = static_cast<double>(core::MemoryLedger::peak_bytes() - start) / rows;
    EXPECT_LT(per_row, 140.0) << "CSR AMG-CG, bytes per unknown above matrix and b";
    RecordProperty("csr_solve_bytes_per_row", std::to_string(per_row));
  }
}

}  // namespace
}  // namespace tessera::sla
