// SELL-C-σ: the product against the CSR product (float64, random irregular matrices with
// empty rows, one row, rows longer than a σ window, non-square), the row permutation undone,
// thread blocks, apply_dot, the layout itself, and the cheap rule Auto applies.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "sla/kernels/csr_kernels.h"
#include "sla/kernels/sell.h"
#include "sla/kernels/spmv.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/solve.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {
namespace {

using detail::SpmvPlan;

/// rows x cols CSR whose row lengths vary from 0 to max_len (every fifth row empty, a few
/// long rows), random values and columns.
SparseTensor irregular(int64_t rows, int64_t cols, int64_t max_len, uint64_t seed) {
  at::manual_seed(seed);
  at::Tensor lengths = at::randint(0, max_len + 1, {rows}, at::kLong);
  lengths.index_put_({at::arange(0, rows, 5)}, 0);
  if (rows > 10) lengths[7] = std::min<int64_t>(cols, 3 * max_len);   // one long row
  std::vector<int64_t> r, c;
  for (int64_t i = 0; i < rows; ++i) {
    at::Tensor pick = at::randperm(cols, at::kLong).narrow(0, 0, lengths[i].item<int64_t>());
    for (int64_t k = 0; k < pick.size(0); ++k) {
      r.push_back(i);
      c.push_back(pick[k].item<int64_t>());
    }
  }
  at::Tensor vals = at::randn({static_cast<int64_t>(r.size())}, at::kDouble);
  return SparseTensor::from_coo(vals, at::tensor(r, at::kLong), at::tensor(c, at::kLong), rows, cols);
}

at::Tensor csr_product(const SparseTensor& a, const at::Tensor& x) {
  return detail::csr_spmm_reference(a.row_ptr(), a.col_idx(), {}, a.values().reshape({1, -1}),
                                    x.reshape({1, -1, 1}), a.rows())
      .reshape({a.rows()});
}

TEST(SellSpmv, MatchesCsrOnIrregularMatricesEveryChunkAndThreadCount) {
  struct Shape {
    int64_t rows, cols, max_len;
  };
  for (Shape s : {Shape{1, 1, 1}, Shape{1, 40, 9}, Shape{3, 7, 5}, Shape{37, 53, 6}, Shape{300, 300, 12},
                  Shape{1000, 700, 20}}) {
    SparseTensor a = irregular(s.rows, s.cols, s.max_len, 11 + s.rows);
    at::Tensor x = at::randn({a.cols()}, at::kDouble);
    at::Tensor ref = csr_product(a, x);
    for (int chunk : {4, 8}) {
      for (int64_t sigma : {1, 8, 64, 4096}) {
        detail::SellForm f = detail::build_sell(a.row_ptr(), a.col_idx(), a.values(), a.rows(), chunk, sigma);
        EXPECT_EQ(f.nnz, a.nnz());
        EXPECT_GE(f.stored(), a.nnz());
        at::Tensor y = at::full({a.rows()}, 1e300, at::kDouble);   // every row must be written
        detail::sell_slices(f, x.data_ptr<double>(), y.data_ptr<double>(), 0, f.slices(), false);
        EXPECT_TRUE(at::allclose(y, ref, 1e-13, 1e-13)) << s.rows << " x " << s.cols << " C " << chunk << " sigma " << sigma;
      }
    }
    for (int threads : {1, 2, 3}) {
      SpmvPlan plan(a.row_ptr(), a.col_idx(), a.values(), a.rows(), a.cols(), SpmvFormat::Sell, threads);
      EXPECT_TRUE(plan.uses_sell());
      at::Tensor y = at::empty({a.rows()}, at::kDouble);
      plan.apply(x, y);
      EXPECT_TRUE(at::allclose(y, ref, 1e-13, 1e-13)) << s.rows << " threads " << threads;
    }
  }
}

TEST(SellSpmv, ApplyDotAndRawApplySortedAndInOrder) {
  // irregular rows: sorted windows (σ 256); finite-volume rows of 3-5 entries, 529 rows (a
  // partial last slice): rows in order with streaming stores
  for (const SparseTensor& a : {irregular(513, 513, 15, 3), variable_diffusion2d(23, {1.0, 2})}) {
    const int64_t n = a.rows();
    at::Tensor x = at::randn({n}, at::kDouble), y = at::empty({n}, at::kDouble), y2 = at::empty({n}, at::kDouble);
    SpmvPlan plan(a.row_ptr(), a.col_idx(), a.values(), n, n, SpmvFormat::Sell, 2);
    EXPECT_STREQ(plan.format_name(), n == 513 ? "sell-8-256" : "sell-8-8");
    const double dot = plan.apply_dot(x, y);
    at::Tensor ref = csr_product(a, x);
    EXPECT_TRUE(at::allclose(y, ref, 1e-13, 1e-13));
    EXPECT_NEAR(dot, at::dot(x, ref).item<double>(), 1e-10 * std::max(1.0, std::abs(dot)));
    plan.apply(x.data_ptr<double>(), y2.data_ptr<double>());
    EXPECT_TRUE(at::equal(y, y2));
    at::Tensor unaligned = at::empty({n + 1}, at::kDouble).narrow(0, 1, n);   // no streaming stores
    plan.apply(x.data_ptr<double>(), unaligned.data_ptr<double>());
    EXPECT_TRUE(at::equal(y, unaligned));
  }
}

TEST(SellSpmv, SlicesAreSortedByLengthInsideWindowsAndPaddedToTheirLongestRow) {
  SparseTensor a = irregular(100, 100, 10, 5);
  at::Tensor rp = a.row_ptr().to(at::kLong);
  auto len = [&](int32_t i) { return i < 0 ? 0 : rp[i + 1].item<int64_t>() - rp[i].item<int64_t>(); };
  detail::SellForm f = detail::build_sell(a.row_ptr(), a.col_idx(), a.values(), 100, 4, 16);
  ASSERT_EQ(f.slices(), 25);
  std::vector<int> seen(100, 0);
  for (int64_t slot = 0; slot < 100; ++slot) {
    const int32_t i = f.row_of[slot];
    ASSERT_GE(i, 0);
    ++seen[i];
    EXPECT_EQ(i / 16, slot / 16);                                               // stays in its σ window
    if (slot % 16 != 0) EXPECT_GE(len(f.row_of[slot - 1]), len(i));             // longest first
  }
  for (int c : seen) EXPECT_EQ(c, 1);                                           // a permutation
  for (int64_t s = 0; s < f.slices(); ++s) {
    int64_t width = 0;
    for (int r = 0; r < 4; ++r) width = std::max(width, len(f.row_of[s * 4 + r]));
    EXPECT_EQ(f.slice_ptr[s + 1] - f.slice_ptr[s], 4 * width);
  }
  const std::vector<int64_t> blocks = detail::balance_slices(f, 3);
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks.front(), 0);
  EXPECT_EQ(blocks.back(), f.slices());
  for (size_t t = 1; t < blocks.size(); ++t) EXPECT_LE(blocks[t - 1], blocks[t]);
}

/// P A P^T for a random permutation P: as symmetric as A, its bandwidth about n.
SparseTensor shuffled(const SparseTensor& a, uint64_t seed) {
  at::manual_seed(seed);
  const at::Tensor perm = at::randperm(a.rows(), at::kLong);
  const at::Tensor rp = a.row_ptr().to(at::kLong);
  const at::Tensor rows = at::repeat_interleave(at::arange(a.rows(), at::kLong), rp.diff());
  return SparseTensor::from_coo(a.values(), perm.index({rows}), perm.index({a.col_idx().to(at::kLong)}), a.rows(),
                                a.cols());
}

TEST(SellSpmv, AutoPicksSellForLargeGeneralMatricesOnly) {
  // a non-stencil matrix with 2^17+ rows and short rows whose bandwidth is beyond symmetric
  // SELL's ring: SELL-C-σ; in its own order: symmetric SELL; its stencil twin: stencil; a
  // small one: CSR
  const SparseTensor ordered = variable_diffusion2d(400, {1.0, 3});   // 160,000 rows, 3-5 per row
  EXPECT_TRUE(SpmvPlan(ordered.row_ptr(), ordered.col_idx(), ordered.values(), ordered.rows(), ordered.cols())
                  .uses_sell_sym());
  SparseTensor big = shuffled(ordered, 4);
  SpmvPlan auto_big(big.row_ptr(), big.col_idx(), big.values(), big.rows(), big.cols());
  EXPECT_TRUE(auto_big.uses_sell());
  EXPECT_STREQ(auto_big.format_name(), "sell-8-8");   // lengths 3-5: rows in order pad little
  at::Tensor x = at::randn({big.cols()}, at::kDouble), y = at::empty({big.rows()}, at::kDouble);
  auto_big.apply(x, y);
  EXPECT_TRUE(at::allclose(y, csr_product(big, x), 1e-13, 1e-13));
  SparseTensor poisson = poisson2d(400);
  EXPECT_TRUE(SpmvPlan(poisson.row_ptr(), poisson.col_idx(), poisson.values(), poisson.rows(), poisson.cols())
                  .uses_stencil());
  SparseTensor small = variable_diffusion2d(100, {1.0, 3});
  EXPECT_STREQ(SpmvPlan(small.row_ptr(), small.col_idx(), small.values(), small.rows(), small.cols()).format_name(),
               "csr");
  EXPECT_FALSE(SpmvPlan(big.row_ptr(), big.col_idx(), big.values(), big.rows(), big.cols(), SpmvFormat::Csr)
                   .uses_sell());
  EXPECT_FALSE(detail::sell_pays({40.0, 5.0, 60}, 1 << 20));   // long rows
  EXPECT_FALSE(detail::sell_pays({4.0, 9.0, 900}, 1 << 20));   // spread beyond the windows
  EXPECT_TRUE(detail::sell_pays({7.0, 1.2, 9}, 1 << 20));
}

TEST(SellSpmv, SolveInfoNamesTheProductNativeKrylovRan) {
  SolveOptions o;
  o.backend = Backend::Native;
  o.method = Method::CG;
  o.maxiter = 3;   // only the product's storage matters here
  SparseTensor general = variable_diffusion2d(400, {1.0, 3});
  at::Tensor b = at::ones({general.rows()}, at::kDouble);
  EXPECT_EQ(solve(general, b, o).second.spmv_format, "sell-sym-8");
  EXPECT_EQ(solve(shuffled(general, 5), b, o).second.spmv_format, "sell-8-8");
  SparseTensor poisson = poisson2d(400);
  EXPECT_EQ(solve(poisson, b, o).second.spmv_format, "stencil");
  o.stencil_spmv = false;
  EXPECT_EQ(solve(general, b, o).second.spmv_format, "csr");
}

// CG's fused vector updates run over the plan's row blocks: with SELL they must be rows, not
// the product's slices (else 7/8 of x and r are never updated and CG stalls). CG on either
// SELL converges like CG on CSR, to the same solution.
TEST(SellSpmv, CgOnSellConvergesLikeCgOnCsr) {
  SolveOptions o;
  o.backend = Backend::Native;
  o.method = Method::CG;
  o.preconditioner = Preconditioner::Jacobi;
  const SparseTensor in_order = variable_diffusion2d(400, {1.0, 3});
  for (int k = 0; k < 2; ++k) {
    const SparseTensor general = k == 0 ? in_order : shuffled(in_order, 6);
    o.rtol = k == 0 ? 1e-10 : 1e-6;   // the shuffled rows' products gather from anywhere: slow
    at::Tensor b = at::randn({general.rows()}, at::kDouble);
    o.stencil_spmv = true;
    auto [x_sell, info_sell] = solve(general, b, o);
    o.stencil_spmv = false;
    auto [x_csr, info_csr] = solve(general, b, o);
    ASSERT_EQ(info_sell.spmv_format, k == 0 ? "sell-sym-8" : "sell-8-8");
    EXPECT_EQ(info_sell.status, SolveStatus::Converged) << info_sell.message;
    EXPECT_LE(info_sell.residual, o.rtol);
    EXPECT_LE(std::abs(info_sell.iterations - info_csr.iterations), 2);
    EXPECT_TRUE(at::allclose(x_sell, x_csr, 1e-7, 1e-9));
  }
}

}  // namespace
}  // namespace tessera::sla
