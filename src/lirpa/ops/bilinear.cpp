// The product of two bounded variables: z = x * y elementwise (ONNX Mul, numpy
// broadcasting) and z = X Y (ONNX MatMul, batched, rank >= 2), x in [lx, ux], y in [ly, uy].
//
// Relaxation (McCormick planes of one product x y). The four planes
//   z >= ly x + lx y - lx ly    (gap (x - lx)(y - ly) >= 0)
//   z >= uy x + ux y - ux uy    (gap (ux - x)(uy - y) >= 0)
//   z <= uy x + lx y - lx uy    (gap (x - lx)(uy - y) >= 0)
//   z <= ly x + ux y - ux ly    (gap (ux - x)(y - ly) >= 0)
// are each exact on two faces of the box and their mean gaps over the box are equal
// (wx wy / 4), so neither plane of a side is better without knowing where the rest of the
// bound is minimised. We take, for every element, the pair exact on the face x = lx:
//   lower  z >= ly x + lx y - lx ly
//   upper  z <= uy x + lx y - lx uy
// which is auto_LiRPA's BoundMul / BoundMatMul choice, so CROWN here and there agree. A
// MatMul entry z_ij = sum_k X_ik Y_kj takes these planes for each product X_ik Y_kj.
//
// alpha-CROWN (as auto_LiRPA's optimisable BoundMul): per row and per element of z, a convex
// combination of the two planes of each side, both sound, so is any mix r in [0, 1]:
//   lower  z >= r_l (ly x + lx y - lx ly) + (1 - r_l) (uy x + ux y - ux uy)
//   upper  z <= r_u (uy x + lx y - lx uy) + (1 - r_u) (ly x + ux y - ux ly)
// r = 1 is CROWN's choice above (the starting point). In a MatMul each product X_ik Y_kj of
// z_ij has its own r (r `[S, 2, ..., n, k, m]`, as auto_LiRPA's per-product alphas). Only where every input bound is finite (else r is ignored:
// an infinite ux or uy times 1 - r = 0 would be NaN).
//
// IBP: x y lies between the least and the greatest of the four corner products (0 * inf
// taken as 0: an unbounded side shows in another corner).

#include <ATen/ATen.h>

#include <optional>

#include "lirpa/bilinear_rows.h"
#include "lirpa/ops/op_util.h"
#include "lirpa/ops/registry.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

namespace {

/// t `[L, *s]` with ones inserted after L until it has `rank` dimensions after L.
at::Tensor align(const at::Tensor& t, int64_t rank) {
  auto s = t.sizes().vec();
  s.insert(s.begin() + 1, rank + 1 - t.dim(), 1);
  return t.reshape(s);
}

/// Sums rows `a` `[S, *z_shape]` onto an operand of `shape` broadcast into z.
at::Tensor sum_onto(const at::Tensor& a, const std::vector<int64_t>& shape) {
  std::vector<int64_t> aligned(a.dim() - 1 - shape.size(), 1);
  aligned.insert(aligned.end(), shape.begin(), shape.end());
  return at::sum_to(a, with_lead(a.size(0), aligned)).reshape(with_lead(a.size(0), shape));
}

/// An input bound `[G, *shape]` with one entry per row (G = 1 stays shared), aligned to z.
at::Tensor rows_of(const at::Tensor& t, int64_t rows, int64_t rank, at::ScalarType dtype) {
  at::Tensor r = t.size(0) == 1 ? t : per_row(t, rows);
  return align(r.to(dtype), rank);
}

/// [min, max] of the four corner products of [lx, ux] * [ly, uy] (broadcast).
Interval corner_product(const Interval& x, const Interval& y) {
  auto times = [](const at::Tensor& a, const at::Tensor& b) { return at::nan_to_num(a * b, 0.0); };  // 0 inf = 0
  at::Tensor p1 = times(x.lower, y.lower), p2 = times(x.lower, y.upper);
  at::Tensor p3 = times(x.upper, y.lower), p4 = times(x.upper, y.upper);
  return {at::min(at::min(p1, p2), at::min(p3, p4)), at::max(at::max(p1, p2), at::max(p3, p4))};
}

/// The shape of the products (no rows) from the operands' shapes aligned to `rank` (numpy
/// broadcasting): z's for a Mul; `[..., n, k, m]` (every X_ik Y_kj) for a MatMul.
std::vector<int64_t> product_shape(std::vector<int64_t> x, std::vector<int64_t> y, int64_t rank, bool matmul) {
  x.insert(x.begin(), rank - x.size(), 1);
  y.insert(y.begin(), rank - y.size(), 1);
  std::vector<int64_t> z(rank);
  for (int64_t i = 0; i < rank; ++i) z[i] = std::max(x[i], y[i]);
  if (matmul) z[rank - 2] = x[rank - 2], z[rank - 1] = x[rank - 1], z.push_back(y[rank - 1]);
  return z;
}

/// CROWN's plane mix (r_l = r_u = 1) for `domains` row groups: `[D, 2, *z]`.
at::Tensor unit_mix(int64_t domains, const std::vector<int64_t>& z) {
  std::vector<int64_t> s{domains, 2};
  s.insert(s.end(), z.begin(), z.end());
  return at::ones(s, at::kDouble);
}

/// Plane mixes are given and every input bound is finite (else CROWN's planes).
bool mixes_apply(const BackwardContext& ctx) {
  if (!ctx.alpha.defined()) return false;
  for (const Interval& b : ctx.input_bounds)
    if (!at::isfinite(b.lower).all().item<bool>() || !at::isfinite(b.upper).all().item<bool>()) return false;
  return true;
}

/// The optimised plane weights r_l, r_u `[S, *z]` of ctx.alpha `[S, 2, *z]` where they apply;
/// undefined otherwise.
std::pair<at::Tensor, at::Tensor> plane_mix(const BackwardContext& ctx) {
  if (!mixes_apply(ctx)) return {};
  at::Tensor r = ctx.alpha.clamp(0, 1);
  return {r.select(1, 0), r.select(1, 1)};
}

}  // namespace

/// z = x * y of two variables (numpy broadcasting between them).
class BilinearMulOp final : public BoundOp {
 public:
  BilinearMulOp(std::vector<int64_t> x_shape, std::vector<int64_t> y_shape, int64_t z_rank)
      : x_shape_(std::move(x_shape)), y_shape_(std::move(y_shape)), rank_(z_rank) {}
  std::string type() const override { return "BilinearMul"; }
  bool needs_input_bounds() const override { return true; }

  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& v) const override {
    return align(v[0], rank_) * align(v[1], rank_);
  }

  Interval ibp(const OpEnv&, const std::vector<Interval>& v) const override {
    return corner_product({align(v[0].lower, rank_), align(v[0].upper, rank_)},
                          {align(v[1].lower, rank_), align(v[1].upper, rank_)});
  }

  bool has_alpha() const override { return true; }
  at::Tensor initial_alpha(const Interval& x) const override {
    return unit_mix(x.lower.size(0), product_shape(x_shape_, y_shape_, rank_, false));
  }

  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext& ctx) const override {
    at::Tensor ad = a->dense(env.dtype);
    const int64_t s = ad.size(0);
    const Interval& bx = ctx.input_bounds.at(0);
    const Interval& by = ctx.input_bounds.at(1);
    at::Tensor lx = rows_of(bx.lower, s, rank_, env.dtype);
    at::Tensor ly = rows_of(by.lower, s, rank_, env.dtype), uy = rows_of(by.upper, s, rank_, env.dtype);
    at::Tensor pos = ad.clamp_min(0), neg = ad.clamp_max(0);
    auto [rl, ru] = plane_mix(ctx);
    if (rl.defined()) {
      at::Tensor ux = rows_of(bx.upper, s, rank_, env.dtype);
      at::Tensor pl = pos * rl, pu = pos - pl, nu = neg * ru, nl = neg - nu;  // A+ r_l, A+ (1 - r_l), A- r_u, A- (1 - r_u)
      at::Tensor ax = sum_onto(pl * ly + pu * uy + nu * uy + nl * ly, x_shape_);  // A_x
      at::Tensor ay = sum_onto((pl + nu) * lx + (pu + nl) * ux, y_shape_);        // A_y
      // bias = -sum(A+ r_l lx ly + A+ (1 - r_l) ux uy + A- r_u lx uy + A- (1 - r_u) ux ly)
      at::Tensor bias = -(pl * (lx * ly) + pu * (ux * uy) + nu * (lx * uy) + nl * (ux * ly)).reshape({s, -1}).sum(1);
      return {{DenseA::make(ax), DenseA::make(ay)}, bias};
    }
    at::Tensor ax = sum_onto(pos * ly + neg * uy, x_shape_);  // A_x = A+ ly + A- uy
    at::Tensor ay = sum_onto(ad * lx, y_shape_);              // A_y = (A+ + A-) lx
    // bias = -sum(A+ lx ly + A- lx uy)
    at::Tensor bias = -(pos * (lx * ly) + neg * (lx * uy)).reshape({s, -1}).sum(1);
    return {{DenseA::make(ax), DenseA::make(ay)}, bias};
  }

 private:
  std::vector<int64_t> x_shape_, y_shape_;
  int64_t rank_;
};

/// Z = X Y of two variables, X `[..., n, k]`, Y `[..., k, m]` (batch dimensions broadcast).
class BilinearMatMulOp final : public BoundOp {
 public:
  BilinearMatMulOp(std::vector<int64_t> x_shape, std::vector<int64_t> y_shape, int64_t z_rank)
      : x_shape_(std::move(x_shape)), y_shape_(std::move(y_shape)), rank_(z_rank) {}
  std::string type() const override { return "BilinearMatMul"; }
  bool needs_input_bounds() const override { return true; }

  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& v) const override {
    return at::matmul(align(v[0], rank_), align(v[1], rank_));
  }

  Interval ibp(const OpEnv&, const std::vector<Interval>& v) const override {
    // z_ij in [sum_k min corners(X_ik, Y_kj), sum_k max corners(X_ik, Y_kj)]
    auto col = [&](const at::Tensor& t) { return align(t, rank_).unsqueeze(-1); };  // [.., n, k, 1]
    auto row = [&](const at::Tensor& t) { return align(t, rank_).unsqueeze(-3); };  // [.., 1, k, m]
    Interval p = corner_product({col(v[0].lower), col(v[0].upper)}, {row(v[1].lower), row(v[1].upper)});
    return {p.lower.sum(-2), p.upper.sum(-2)};
  }

  bool has_alpha() const override { return true; }
  at::Tensor initial_alpha(const Interval& x) const override {
    return unit_mix(x.lower.size(0), product_shape(x_shape_, y_shape_, rank_, true));
  }

  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext& ctx) const override {
    at::Tensor ad = a->dense(env.dtype);
    const int64_t s = ad.size(0);
    if (auto fused = fused_rows(env, ad, ctx)) return *std::move(fused);
    at::Tensor lx = rows_of(ctx.input_bounds.at(0).lower, s, rank_, env.dtype);
    at::Tensor ly = rows_of(ctx.input_bounds.at(1).lower, s, rank_, env.dtype);
    at::Tensor uy = rows_of(ctx.input_bounds.at(1).upper, s, rank_, env.dtype);
    at::Tensor pos = ad.clamp_min(0), neg = ad.clamp_max(0);
    auto [rl, ru] = plane_mix(ctx);
    if (rl.defined()) {  // per product, on [S, ..., n, k, m]: i over -3, k over -2, j over -1
      at::Tensor ux = rows_of(ctx.input_bounds.at(0).upper, s, rank_, env.dtype);
      at::Tensor p3 = pos.unsqueeze(-2), n3 = neg.unsqueeze(-2);  // A+_ij, A-_ij as [.., n, 1, m]
      at::Tensor pl = p3 * rl, pu = p3 - pl, nu = n3 * ru, nl = n3 - nu;  // A+ r_l, A+ (1 - r_l), A- r_u, A- (1 - r_u)
      at::Tensor lyk = ly.unsqueeze(-3), uyk = uy.unsqueeze(-3);  // Y_kj as [.., 1, k, m]
      at::Tensor lxk = lx.unsqueeze(-1), uxk = ux.unsqueeze(-1);  // X_ik as [.., n, k, 1]
      // A_X_ik = sum_j (A+ r_l + A- (1 - r_u)) ly_kj + (A+ (1 - r_l) + A- r_u) uy_kj
      at::Tensor ax = ((pl + nl) * lyk + (pu + nu) * uyk).sum(-1);
      // A_Y_kj = sum_i (A+ r_l + A- r_u) lx_ik + (A+ (1 - r_l) + A- (1 - r_u)) ux_ik
      at::Tensor ay = ((pl + nu) * lxk + (pu + nl) * uxk).sum(-3);
      // bias = -sum_ikj (A+ r_l lx ly + A+ (1 - r_l) ux uy + A- r_u lx uy + A- (1 - r_u) ux ly)
      at::Tensor bias = -(pl * (lxk * lyk) + pu * (uxk * uyk) + nu * (lxk * uyk) + nl * (uxk * lyk)).reshape({s, -1}).sum(1);
      return {{DenseA::make(sum_onto(ax, x_shape_)), DenseA::make(sum_onto(ay, y_shape_))}, bias};
    }
    // A_X = A+ ly^T + A- uy^T,  A_Y = lx^T (A+ + A-)
    at::Tensor ax = at::matmul(pos, ly.transpose(-1, -2)) + at::matmul(neg, uy.transpose(-1, -2));
    at::Tensor ay = at::matmul(lx.transpose(-1, -2), ad);
    // bias = -sum(A+ (lx ly) + A- (lx uy))
    at::Tensor bias = -(pos * at::matmul(lx, ly) + neg * at::matmul(lx, uy)).reshape({s, -1}).sum(1);
    return {{DenseA::make(sum_onto(ax, x_shape_)), DenseA::make(sum_onto(ay, y_shape_))}, bias};
  }

 private:
  /// The optimised planes through rows ad `[S, ..., n, m]` in one pass (bilinear_rows.h), the
  /// batch dimensions of Z flattened into one; nothing without plane mixes or where the
  /// one-pass kernel does not apply.
  std::optional<Backward> fused_rows(const OpEnv& env, const at::Tensor& ad, const BackwardContext& ctx) const {
    if (!mixes_apply(ctx)) return std::nullopt;
    const auto z = product_shape(x_shape_, y_shape_, rank_, true);  // [..., n, k, m]
    const int64_t n = z[rank_ - 2], k = z[rank_ - 1], m = z[rank_];
    std::vector<int64_t> batch(z.begin(), z.begin() + (rank_ - 2));
    int64_t b = 1;
    for (int64_t v : batch) b *= v;
    // an operand's bounds [G, *shape] as [G, B, rows, cols] over Z's batch
    auto grouped = [&](const at::Tensor& t, int64_t rows, int64_t cols) {
      at::Tensor g = align(t.to(env.dtype), rank_);
      std::vector<int64_t> full{g.size(0)};
      full.insert(full.end(), batch.begin(), batch.end());
      full.push_back(rows), full.push_back(cols);
      return g.expand(full).reshape({g.size(0), b, rows, cols});
    };
    const Interval& bx = ctx.input_bounds.at(0);
    const Interval& by = ctx.input_bounds.at(1);
    const int64_t s = ad.size(0);
    auto rows = bilinear_matmul_rows(ad.reshape({s, b, n, m}), ctx.alpha.to(env.dtype).reshape({s, 2, b, n, k, m}),
                                     {grouped(bx.lower, n, k), grouped(bx.upper, n, k)},
                                     {grouped(by.lower, k, m), grouped(by.upper, k, m)});
    if (!rows) return std::nullopt;
    auto unflat = [&](const at::Tensor& t, int64_t r, int64_t c) {
      std::vector<int64_t> shape{s};
      shape.insert(shape.end(), batch.begin(), batch.end());
      shape.push_back(r), shape.push_back(c);
      return t.reshape(shape);
    };
    return Backward{{DenseA::make(sum_onto(unflat(rows->ax, n, k), x_shape_)),
                     DenseA::make(sum_onto(unflat(rows->ay, k, m), y_shape_))},
                    rows->bias};
  }

  std::vector<int64_t> x_shape_, y_shape_;
  int64_t rank_;
};

BuiltOp build_bilinear_mul(const OnnxNode& n) {
  const NodeInput& x = n.inputs.at(0);
  const NodeInput& y = n.inputs.at(1);
  const int64_t rank = static_cast<int64_t>(std::max(x.shape.size(), y.shape.size()));
  return {std::make_shared<BilinearMulOp>(x.shape, y.shape, rank), {x.node, y.node}};
}

BuiltOp build_bilinear_matmul(const OnnxNode& n) {
  const NodeInput& x = n.inputs.at(0);
  const NodeInput& y = n.inputs.at(1);
  TESSERA_CHECK(x.shape.size() >= 2 && y.shape.size() >= 2, Unsupported, "MatMul node '", n.name,
                "': a product of two variables needs operands of rank >= 2 (ranks ", x.shape.size(), " and ",
                y.shape.size(), ")");
  TESSERA_CHECK(x.shape.back() == y.shape[y.shape.size() - 2], DimensionMismatch, "MatMul node '", n.name,
                "': inner dimensions ", x.shape.back(), " and ", y.shape[y.shape.size() - 2], " differ");
  const int64_t rank = static_cast<int64_t>(std::max(x.shape.size(), y.shape.size()));
  return {std::make_shared<BilinearMatMulOp>(x.shape, y.shape, rank), {x.node, y.node}};
}

}  // namespace tessera::lirpa::detail
