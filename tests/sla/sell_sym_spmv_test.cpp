// Symmetric SELL: the product against the CSR product on random symmetric matrices (empty
// rows, rows without a diagonal, partial last slices, bandwidths up to the ring's), y the
// same bit for bit whatever the split into slice ranges and threads (the replay of the rows
// before a range), both kernels (streaming stores or not), apply_dot, the refusals, and
// what Auto picks.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sla/kernels/csr_kernels.h"
#include "sla/kernels/sell_sym.h"
#include "sla/kernels/spmv.h"
#include "tessera/core/error.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {
namespace {

using detail::SpmvPlan;

/// n x n symmetric: row i stores up to max_upper entries a_ij = a_ji with i < j <= i + band,
/// its diagonal unless i % 7 == 3, nothing at all when i % 5 == 0 (and no mirror lands there
/// either: those columns are skipped).
SparseTensor random_symmetric(int64_t n, int64_t band, int64_t max_upper, uint64_t seed) {
  at::manual_seed(seed);
  std::vector<int64_t> r, c;
  std::vector<double> v;
  auto add = [&](int64_t i, int64_t j, double a) {
    r.push_back(i);
    c.push_back(j);
    v.push_back(a);
  };
  for (int64_t i = 0; i < n; ++i) {
    if (i % 5 == 0) continue;
    if (i % 7 != 3) add(i, i, 4.0 + at::rand({1}, at::kDouble).item<double>());
    const int64_t span = std::min(band, n - 1 - i);
    if (span <= 0) continue;
    const at::Tensor offsets = at::randperm(span, at::kLong).narrow(0, 0, std::min(span, max_upper)) + 1;
    for (int64_t k = 0; k < offsets.size(0); ++k) {
      const int64_t j = i + offsets[k].item<int64_t>();
      if (j % 5 == 0) continue;
      const double a = at::randn({1}, at::kDouble).item<double>();
      add(i, j, a);
      add(j, i, a);
    }
  }
  return SparseTensor::from_coo(at::tensor(v, at::kDouble), at::tensor(r, at::kLong), at::tensor(c, at::kLong), n, n);
}

at::Tensor csr_product(const SparseTensor& a, const at::Tensor& x) {
  return detail::csr_spmm_reference(a.row_ptr(), a.col_idx(), {}, a.values().reshape({1, -1}),
                                    x.reshape({1, -1, 1}), a.rows())
      .reshape({a.rows()});
}

/// y = A x over slice ranges [cuts[k], cuts[k+1]), run last range first; y prefilled with
/// 1e300 so that a row never written shows. aligned false: y 8 bytes off a 64-byte boundary
/// (the portable kernel; aligned: the streaming one where the processor has AVX2).
at::Tensor product_in_ranges(const detail::SellSymForm& f, const at::Tensor& x, const std::vector<int64_t>& cuts,
                             bool aligned, double* dot) {
  at::Tensor y = aligned ? at::full({f.rows}, 1e300, at::kDouble)
                         : at::full({f.rows + 1}, 1e300, at::kDouble).narrow(0, 1, f.rows);
  *dot = 0.0;
  for (size_t k = cuts.size() - 1; k-- > 0;) {
    *dot += detail::sell_sym_slices(f, x.data_ptr<double>(), y.data_ptr<double>(), cuts[k], cuts[k + 1], true);
  }
  return y;
}

TEST(SellSymSpmv, MatchesCsrAndDoesNotDependOnTheSplit) {
  struct Shape {
    int64_t n, band, max_upper;
  };
  std::vector<SparseTensor> matrices;
  for (Shape s : {Shape{1, 1, 1}, Shape{5, 4, 2}, Shape{8, 7, 7}, Shape{37, 10, 3}, Shape{300, 40, 4},
                  Shape{1003, 200, 6}, Shape{2000, 2000, 2}}) {
    matrices.push_back(random_symmetric(s.n, s.band, s.max_upper, 17 + s.n));
  }
  // banded in natural order: steps whose 8 columns run j0 .. j0 + 7 (vector loads and
  // scatters), some of them wrapping around the ring (lane by lane); 529 rows: a partial slice
  for (int64_t grid : {23, 60}) matrices.push_back(variable_diffusion2d(grid, {1.0, 5}));
  matrices.push_back(variable_diffusion3d(9, {1.0, 5}));
  for (const SparseTensor& a : matrices) {
    const int64_t n = a.rows();
    const detail::SellSymForm f = detail::build_sell_sym(a.row_ptr(), a.col_idx(), a.values(), a.rows());
    ASSERT_FALSE(f.empty()) << n;
    EXPECT_EQ(f.nnz, a.nnz());
    EXPECT_LT(f.reach, std::max<int64_t>(n, 1));
    EXPECT_GE(f.ring, f.reach + 2 * detail::SellSymForm::kChunk);
    EXPECT_EQ(f.ring & (f.ring - 1), 0);
    const at::Tensor x = at::randn({n}, at::kDouble);
    const at::Tensor ref = csr_product(a, x);
    const double ref_dot = at::dot(x, ref).item<double>();
    const int64_t slices = f.slices();
    for (bool aligned : {true, false}) {
      double whole_dot = 0.0;
      const at::Tensor whole = product_in_ranges(f, x, {0, slices}, aligned, &whole_dot);
      EXPECT_TRUE(at::allclose(whole, ref, 1e-13, 1e-13)) << n << " aligned " << aligned;
      EXPECT_NEAR(whole_dot, ref_dot, 1e-11 * std::max(1.0, std::abs(ref_dot)));
      // every split point, and a split into ranges one slice long: y bit for bit the same
      std::vector<std::vector<int64_t>> splits;
      for (int64_t cut = 1; cut < slices; cut += std::max<int64_t>(1, slices / 40)) splits.push_back({0, cut, slices});
      std::vector<int64_t> every(static_cast<size_t>(slices) + 1);
      for (int64_t k = 0; k <= slices; ++k) every[k] = k;
      splits.push_back(every);
      for (const auto& cuts : splits) {
        double dot = 0.0;
        const at::Tensor y = product_in_ranges(f, x, cuts, aligned, &dot);
        ASSERT_TRUE(at::equal(y, whole)) << n << " cut at slice " << cuts[1] << " of " << slices;
        EXPECT_NEAR(dot, ref_dot, 1e-11 * std::max(1.0, std::abs(ref_dot)));
      }
    }
  }
}

TEST(SellSymSpmv, PlanThreadsApplyDotAndRawApply) {
  const SparseTensor a = random_symmetric(5001, 300, 5, 3);
  const at::Tensor x = at::randn({a.rows()}, at::kDouble);
  const at::Tensor ref = csr_product(a, x);
  at::Tensor first;
  for (int threads : {1, 2, 3, 4}) {
    SpmvPlan plan(a.row_ptr(), a.col_idx(), a.values(), a.rows(), a.cols(), SpmvFormat::SellSymmetric, threads);
    ASSERT_TRUE(plan.uses_sell_sym());
    EXPECT_STREQ(plan.format_name(), "sell-sym-8");
    at::Tensor y = at::empty({a.rows()}, at::kDouble), raw = at::empty({a.rows()}, at::kDouble);
    const double dot = plan.apply_dot(x, y);
    EXPECT_TRUE(at::allclose(y, ref, 1e-13, 1e-13)) << threads;
    EXPECT_NEAR(dot, at::dot(x, ref).item<double>(), 1e-10 * std::abs(dot));
    plan.apply(x.data_ptr<double>(), raw.data_ptr<double>());
    EXPECT_TRUE(at::equal(y, raw));
    if (!first.defined()) first = y;
    EXPECT_TRUE(at::equal(y, first)) << "threads " << threads;   // y does not depend on the blocks
    // diagonal + upper values at 8 bytes, upper columns at 4: under the 12 per nonzero of SELL-C-σ
    EXPECT_LT(plan.bytes_per_apply(), 12.0 * static_cast<double>(a.nnz()) + 16.0 * static_cast<double>(a.rows()));
  }
}

TEST(SellSymSpmv, RefusesWhatItCannotHold) {
  const SparseTensor a = random_symmetric(400, 30, 4, 9);
  std::string why;
  // one value off by an ulp: not symmetric bit for bit
  at::Tensor v = a.values().clone();
  const at::Tensor rp = a.row_ptr().to(at::kLong), ci = a.col_idx().to(at::kLong);
  int64_t p = 0;
  for (int64_t i = 1; i < a.rows() && p == 0; ++i) {
    for (int64_t q = rp[i].item<int64_t>(); q < rp[i + 1].item<int64_t>(); ++q) {
      if (ci[q].item<int64_t>() > i) {
        p = q;
        break;
      }
    }
  }
  ASSERT_GT(p, 0);
  v[p] = std::nextafter(v[p].item<double>(), 1e300);
  EXPECT_TRUE(detail::build_sell_sym(a.row_ptr(), a.col_idx(), v, a.rows(), detail::kMaxSymRing, &why).empty());
  EXPECT_NE(why.find("not symmetric"), std::string::npos) << why;
  try {
    SpmvPlan(a.row_ptr(), a.col_idx(), v, a.rows(), a.cols(), SpmvFormat::SellSymmetric, 2);
    ADD_FAILURE() << "a non-symmetric matrix was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("not symmetric"), std::string::npos) << e.what();
  }
  // a bandwidth beyond the ring
  why.clear();
  EXPECT_TRUE(detail::build_sell_sym(a.row_ptr(), a.col_idx(), a.values(), a.rows(), 32, &why).empty());
  EXPECT_NE(why.find("bandwidth"), std::string::npos) << why;
  EXPECT_FALSE(detail::build_sell_sym(a.row_ptr(), a.col_idx(), a.values(), a.rows(), 64, &why).empty());
  // a pattern that is not symmetric
  const SparseTensor lower = SparseTensor::from_coo(at::ones({2}, at::kDouble), at::tensor({1, 1}, at::kLong),
                                                    at::tensor({0, 1}, at::kLong), 2, 2);
  EXPECT_TRUE(detail::build_sell_sym(lower.row_ptr(), lower.col_idx(), lower.values(), 2).empty());
  EXPECT_THROW(SpmvPlan(lower.row_ptr(), lower.col_idx(), lower.values(), 2, 2, SpmvFormat::SellSymmetric, 1), Error);
  // a column beyond the rows (not square): refused before any mirror is looked up
  const SparseTensor wide = SparseTensor::from_coo(at::ones({3}, at::kDouble), at::tensor({0, 1, 1}, at::kLong),
                                                   at::tensor({0, 1, 2}, at::kLong), 2, 3);
  EXPECT_TRUE(detail::build_sell_sym(wide.row_ptr(), wide.col_idx(), wide.values(), 2).empty());
  EXPECT_THROW(SpmvPlan(wide.row_ptr(), wide.col_idx(), wide.values(), 2, 3, SpmvFormat::SellSymmetric, 1), Error);
}

TEST(SellSymSpmv, AutoPicksItForLargeSymmetricMatrices) {
  const SparseTensor fe = fe_laplacian2d(400);   // 160,000 rows: SELL pays, symmetric
  SpmvPlan plan(fe.row_ptr(), fe.col_idx(), fe.values(), fe.rows(), fe.cols());
  EXPECT_STREQ(plan.format_name(), "sell-sym-8");
  const at::Tensor x = at::randn({fe.rows()}, at::kDouble);
  at::Tensor y = at::empty({fe.rows()}, at::kDouble);
  plan.apply(x, y);
  EXPECT_TRUE(at::allclose(y, csr_product(fe, x), 1e-13, 1e-13));
  EXPECT_STREQ(SpmvPlan(fe.row_ptr(), fe.col_idx(), fe.values(), fe.rows(), fe.cols(), SpmvFormat::Sell).format_name(),
               "sell-8-256");   // in order it would pad more than 10%
}

}  // namespace
}  // namespace tessera::sla
