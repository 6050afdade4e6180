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
// IBP: x y lies between the least and the greatest of the four corner products (0 * inf
// taken as 0: an unbounded side shows in another corner).

#include <ATen/ATen.h>

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

  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext& ctx) const override {
    at::Tensor ad = a->dense(env.dtype);
    const int64_t s = ad.size(0);
    const Interval& bx = ctx.input_bounds.at(0);
    const Interval& by = ctx.input_bounds.at(1);
    at::Tensor lx = rows_of(bx.lower, s, rank_, env.dtype);
    at::Tensor ly = rows_of(by.lower, s, rank_, env.dtype), uy = rows_of(by.upper, s, rank_, env.dtype);
    at::Tensor pos = ad.clamp_min(0), neg = ad.clamp_max(0);
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

  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext& ctx) const override {
    at::Tensor ad = a->dense(env.dtype);
    const int64_t s = ad.size(0);
    at::Tensor lx = rows_of(ctx.input_bounds.at(0).lower, s, rank_, env.dtype);
    at::Tensor ly = rows_of(ctx.input_bounds.at(1).lower, s, rank_, env.dtype);
    at::Tensor uy = rows_of(ctx.input_bounds.at(1).upper, s, rank_, env.dtype);
    at::Tensor pos = ad.clamp_min(0), neg = ad.clamp_max(0);
    // A_X = A+ ly^T + A- uy^T,  A_Y = lx^T (A+ + A-)
    at::Tensor ax = at::matmul(pos, ly.transpose(-1, -2)) + at::matmul(neg, uy.transpose(-1, -2));
    at::Tensor ay = at::matmul(lx.transpose(-1, -2), ad);
    // bias = -sum(A+ (lx ly) + A- (lx uy))
    at::Tensor bias = -(pos * at::matmul(lx, ly) + neg * at::matmul(lx, uy)).reshape({s, -1}).sum(1);
    return {{DenseA::make(sum_onto(ax, x_shape_)), DenseA::make(sum_onto(ay, y_shape_))}, bias};
  }

 private:
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
