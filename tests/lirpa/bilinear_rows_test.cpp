// The one-pass McCormick relaxation of Z = X Y through dense rows (bilinear_rows.h) against
// the same arithmetic written out in ATen (ops/bilinear.cpp's general path): values, and on a
// gradient tape the gradients of the rows, the plane mixes (clamped outside [0, 1]) and the
// four bounds, with bounds shared by all rows, per row and per row group; float32 and float64;
// the same bits with one thread or two.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <vector>

#include "lirpa/bilinear_rows.h"

namespace tessera::lirpa::detail {
namespace {

constexpr int64_t S = 6, B = 2, N = 3, K = 4, M = 5;

// t [G, ...] spread over S rows: row s reads group s / (S / G).
at::Tensor spread(const at::Tensor& t) { return t.repeat_interleave(S / t.size(0), 0); }

BilinearRows reference(const at::Tensor& a, const at::Tensor& alpha, const Interval& x, const Interval& y) {
  at::Tensor r = alpha.clamp(0, 1), rl = r.select(1, 0), ru = r.select(1, 1);
  at::Tensor p3 = a.clamp_min(0).unsqueeze(-2), n3 = a.clamp_max(0).unsqueeze(-2);  // [S, B, n, 1, m]
  at::Tensor pl = p3 * rl, pu = p3 - pl, nu = n3 * ru, nl = n3 - nu;
  at::Tensor lx = spread(x.lower).unsqueeze(-1), ux = spread(x.upper).unsqueeze(-1);  // [S, B, n, k, 1]
  at::Tensor ly = spread(y.lower).unsqueeze(-3), uy = spread(y.upper).unsqueeze(-3);  // [S, B, 1, k, m]
  at::Tensor ax = ((pl + nl) * ly + (pu + nu) * uy).sum(-1);
  at::Tensor ay = ((pl + nu) * lx + (pu + nl) * ux).sum(-3);
  at::Tensor bias = -(pl * (lx * ly) + pu * (ux * uy) + nu * (lx * uy) + nl * (ux * ly)).reshape({S, -1}).sum(1);
  return {ax, ay, bias};
}

struct Inputs {
  at::Tensor a, alpha;
  Interval x, y;
};

Inputs random_inputs(int64_t gx, int64_t gy, at::ScalarType dtype) {
  at::Tensor a = at::randn({S, B, N, M}, dtype);
  a.view(-1).slice(0, 0, 7).zero_();  // A = 0: both sides' gradients pass
  at::Tensor alpha = at::rand({S, 2, B, N, K, M}, dtype) * 1.6 - 0.3;  // some outside [0, 1]: clamped
  at::Tensor cx = at::randn({gx, B, N, K}, dtype), cy = at::randn({gy, B, K, M}, dtype);
  return {a, alpha, {cx - at::rand_like(cx), cx + at::rand_like(cx)}, {cy - at::rand_like(cy), cy + at::rand_like(cy)}};
}

void expect_close(const at::Tensor& got, const at::Tensor& want, double tol, const char* what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_TRUE(at::allclose(got, want, tol, tol)) << what << ": " << (got - want).abs().max().item<double>();
}

TEST(LirpaBilinearRows, EqualsTheAtenArithmetic) {
  at::manual_seed(11);
  for (at::ScalarType dtype : {at::kDouble, at::kFloat}) {
    for (auto [gx, gy] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {S, 1}, {3, 2}, {S, S}}) {
      SCOPED_TRACE(::testing::Message() << at::toString(dtype) << " groups " << gx << ", " << gy);
      Inputs in = random_inputs(gx, gy, dtype);
      auto got = bilinear_matmul_rows(in.a, in.alpha, in.x, in.y);
      ASSERT_TRUE(got.has_value());
      BilinearRows want = reference(in.a, in.alpha, in.x, in.y);
      const double tol = dtype == at::kDouble ? 1e-12 : 1e-4;
      expect_close(got->ax, want.ax, tol, "A_X");
      expect_close(got->ay, want.ay, tol, "A_Y");
      expect_close(got->bias, want.bias, tol, "bias");
    }
  }
}

TEST(LirpaBilinearRows, OnATapeGivesTheAtenGradients) {
  at::manual_seed(12);
  at::AutoGradMode grad(true);
  for (at::ScalarType dtype : {at::kDouble, at::kFloat}) {
    for (auto [gx, gy] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 2}, {S, S}}) {
      SCOPED_TRACE(::testing::Message() << at::toString(dtype) << " groups " << gx << ", " << gy);
      Inputs in = random_inputs(gx, gy, dtype);
      // upstream weights for each output, so every gradient term counts
      at::Tensor wx = at::randn({S, B, N, K}, dtype), wy = at::randn({S, B, K, M}, dtype), wb = at::randn({S}, dtype);
      auto run = [&](bool ours) {
        std::vector<at::Tensor> leaves{in.a.clone(), in.alpha.clone(), in.x.lower.clone(), in.x.upper.clone(),
                                       in.y.lower.clone(), in.y.upper.clone()};
        for (auto& t : leaves) t.requires_grad_(true);
        Interval x{leaves[2] * 1, leaves[3] * 1}, y{leaves[4] * 1, leaves[5] * 1};  // not leaves: as on the tape
        BilinearRows r = ours ? *bilinear_matmul_rows(leaves[0] * 1, leaves[1] * 1, x, y)
                              : reference(leaves[0] * 1, leaves[1] * 1, x, y);
        ((r.ax * wx).sum() + (r.ay * wy).sum() + (r.bias * wb).sum()).backward();
        std::vector<at::Tensor> g;
        for (auto& t : leaves) g.push_back(t.grad());
        return g;
      };
      auto got = run(true), want = run(false);
      const double tol = dtype == at::kDouble ? 1e-11 : 1e-3;
      const char* names[] = {"dA", "dalpha", "dlx", "dux", "dly", "duy"};
      for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i], tol, names[i]);
    }
  }
}

TEST(LirpaBilinearRows, SameBitsWithOneThreadOrTwo) {
  at::manual_seed(13);
  const int threads = at::get_num_threads();
  Inputs in = random_inputs(3, 1, at::kDouble);
  at::set_num_threads(1);
  BilinearRows one = *bilinear_matmul_rows(in.a, in.alpha, in.x, in.y);
  at::set_num_threads(2);
  BilinearRows two = *bilinear_matmul_rows(in.a, in.alpha, in.x, in.y);
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(one.ax, two.ax) && at::equal(one.ay, two.ay) && at::equal(one.bias, two.bias));
}

TEST(LirpaBilinearRows, LeavesOtherShapesAndTypesToTheGeneralPath) {
  Inputs in = random_inputs(1, 1, at::kDouble);
  EXPECT_FALSE(bilinear_matmul_rows(in.a.to(at::kLong), in.alpha, in.x, in.y));           // dtype
  EXPECT_FALSE(bilinear_matmul_rows(in.a, in.alpha.to(at::kFloat), in.x, in.y));           // mixed dtypes
  EXPECT_FALSE(bilinear_matmul_rows(in.a, in.alpha.select(1, 0), in.x, in.y));             // one mix per product
  Inputs odd = random_inputs(4, 1, at::kDouble);                                            // 4 groups do not divide 6 rows
  EXPECT_FALSE(bilinear_matmul_rows(odd.a, odd.alpha, odd.x, odd.y));
}

}  // namespace
}  // namespace tessera::lirpa::detail
