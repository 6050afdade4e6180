// A matrices: the default (dense) operator actions, dense rows and signed unit rows.

#include "tessera/lirpa/a_matrix.h"

#include <ATen/ATen.h>

#include <array>

#include "conv_transpose_rows.h"
#include "dense_relax.h"
#include "tessera/core/error.h"
#include "tessera/lirpa/patches_a.h"

namespace tessera::lirpa {

RelaxedRows AMatrix::relax(const ElementwiseRelaxation& r, at::ScalarType dtype) const {
  at::Tensor ad = dense(dtype);
  if (auto fused = detail::relax_dense_rows(ad, r)) return *std::move(fused);  // no gradient recorded: one pass
  at::Tensor pos = ad.clamp_min(0), neg = ad.clamp_max(0);
  at::Tensor ax = times_grouped(pos, r.lower_d) + times_grouped(neg, r.upper_d);  // A_x = A+ d_l + A- d_u
  at::Tensor bias = at::zeros({ad.size(0)}, ad.options());
  if (r.lower_b.defined()) bias = bias + times_grouped(pos, r.lower_b).reshape({ad.size(0), -1}).sum(1);
  if (r.upper_b.defined()) bias = bias + times_grouped(neg, r.upper_b).reshape({ad.size(0), -1}).sum(1);
  return {DenseA::make(ax), bias};
}

APtr AMatrix::through_conv(const at::Tensor& w, const Conv2dGeometry& g, const std::vector<int64_t>& in_shape,
                           at::ScalarType dtype) const {
  at::Tensor ad = dense(dtype);
  auto sz = ad.sizes().vec();
  at::Tensor a4 = ad.reshape({-1, sz[sz.size() - 3], sz[sz.size() - 2], sz[sz.size() - 1]});
  std::vector<int64_t> out_pad(2);
  for (int i = 0; i < 2; ++i) {
    int64_t kernel = w.size(2 + i);
    int64_t full = (a4.size(2 + i) - 1) * g.stride[i] - 2 * g.pad[i] + g.dilation[i] * (kernel - 1) + 1;
    out_pad[i] = in_shape[in_shape.size() - 2 + i] - full;  // rows/cols the strided forward never read
  }
  // A_x = W^T * A_y (transposed convolution of every row)
  at::Tensor ax = detail::conv_transpose_any(a4, w.to(dtype), g.stride, g.pad, out_pad, g.dilation, g.groups);
  std::vector<int64_t> full{ad.size(0)};
  full.insert(full.end(), in_shape.begin(), in_shape.end());
  return DenseA::make(ax.reshape(full));
}

DenseA::DenseA(at::Tensor a) : a_(std::move(a)) {
  TESSERA_CHECK(a_.defined() && a_.dim() >= 1, InvalidInput, "DenseA needs a tensor [S, ...]");
}

int64_t DenseA::rows() const { return a_.size(0); }

std::vector<int64_t> DenseA::node_shape() const {
  auto s = a_.sizes().vec();
  return {s.begin() + 1, s.end()};
}

at::Tensor DenseA::dense(at::ScalarType dtype) const { return a_.to(dtype); }

at::Tensor DenseA::contract(const at::Tensor& v) const {
  // sum_i A[s, i] v[i]
  at::Tensor full = v.to(a_.scalar_type()).expand(node_shape()).reshape({-1});
  return at::matmul(a_.reshape({a_.size(0), -1}), full);
}

at::Tensor DenseA::concretize_lower(const at::Tensor& l, const at::Tensor& u) const {
  // min_x A x = A c - |A| r with c = (l+u)/2, r = (u-l)/2, one box per row group
  const int64_t s = a_.size(0), g = row_groups(l, a_.dim() - 1, s);
  at::Tensor a3 = a_.reshape({g, s / g, -1});  // [G, S/G, n]
  at::Tensor lf = l.to(a_.scalar_type()).reshape({g, -1, 1});
  at::Tensor uf = u.to(a_.scalar_type()).reshape({g, -1, 1});
  at::Tensor center = (lf + uf) / 2;
  at::Tensor radius = (uf - lf) / 2;
  if (g == 1) return at::matmul(a3[0], center[0].squeeze(1)) - at::matmul(a3[0].abs(), radius[0].squeeze(1));
  return (at::bmm(a3, center) - at::bmm(a3.abs(), radius)).reshape({s});
}

APtr DenseA::reshaped(const std::vector<int64_t>& shape) const {
  std::vector<int64_t> full{a_.size(0)};
  full.insert(full.end(), shape.begin(), shape.end());
  return make(a_.reshape(full));
}

UnitRowsA::UnitRowsA(std::vector<int64_t> shape, at::Tensor index, at::Tensor sign)
    : shape_(std::move(shape)), index_(std::move(index)), sign_(std::move(sign)) {
  TESSERA_CHECK(index_.numel() == sign_.numel(), DimensionMismatch,
                "UnitRowsA: ", index_.numel(), " indices but ", sign_.numel(), " signs");
}

APtr UnitRowsA::identity(const std::vector<int64_t>& shape, bool both_signs) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  at::Tensor idx = at::arange(n, at::kLong);
  at::Tensor sign = at::ones({n}, at::kDouble);
  if (both_signs) {
    idx = at::cat({idx, idx});
    sign = at::cat({sign, -sign});
  }
  return std::make_shared<UnitRowsA>(shape, idx, sign);
}

int64_t UnitRowsA::rows() const { return index_.numel(); }

at::Tensor UnitRowsA::dense(at::ScalarType dtype) const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  at::Tensor out = at::zeros({rows(), n}, at::TensorOptions().dtype(dtype));
  // out[s, index_s] = sign_s
  out.scatter_(1, index_.unsqueeze(1), sign_.to(dtype).unsqueeze(1));
  std::vector<int64_t> full{rows()};
  full.insert(full.end(), shape_.begin(), shape_.end());
  return out.reshape(full);
}

at::Tensor UnitRowsA::contract(const at::Tensor& v) const {
  at::Tensor full = v.expand(shape_).reshape({-1});
  return full.index_select(0, index_) * sign_.to(v.scalar_type());
}

at::Tensor UnitRowsA::concretize_lower(const at::Tensor& l, const at::Tensor& u) const {
  // c_s > 0: c_s l[i_s]; otherwise c_s u[i_s] (the box of row s's group)
  at::Tensor lf = pick(l), uf = pick(u);
  at::Tensor s = sign_.to(l.scalar_type());
  return at::where(s > 0, s * lf, s * uf);
}

at::Tensor UnitRowsA::pick(const at::Tensor& t) const {
  const int64_t s = rows(), g = row_groups(t, shape_.size(), s);
  if (g == 1) {
    at::Tensor shared = t.dim() == static_cast<int64_t>(shape_.size()) + 1 ? t.select(0, 0) : t;
    return shared.expand(shape_).reshape({-1}).index_select(0, index_);  // t[i_s]
  }
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  std::vector<int64_t> full{g};
  full.insert(full.end(), shape_.begin(), shape_.end());
  at::Tensor group = at::div(at::arange(s, at::kLong), s / g, "floor");
  return t.expand(full).reshape({-1}).index_select(0, group * n + index_);  // t[s / (S/G), i_s]
}

RelaxedRows UnitRowsA::relax(const ElementwiseRelaxation& r, at::ScalarType dtype) const {
  at::Tensor c = sign_.to(dtype);
  at::Tensor pos = c > 0;
  // c_x = c+ d_l + c- d_u;  bias = c+ b_l + c- b_u
  at::Tensor cx = at::where(pos, c * pick(r.lower_d.to(dtype)), c * pick(r.upper_d.to(dtype)));
  at::Tensor bias = at::zeros({rows()}, c.options());
  if (r.lower_b.defined()) bias = bias + at::where(pos, c * pick(r.lower_b.to(dtype)), at::zeros_like(c));
  if (r.upper_b.defined()) bias = bias + at::where(pos, at::zeros_like(c), c * pick(r.upper_b.to(dtype)));
  return {std::make_shared<UnitRowsA>(shape_, index_, cx), bias};
}

APtr UnitRowsA::reshaped(const std::vector<int64_t>& shape) const {
  return std::make_shared<UnitRowsA>(shape, index_, sign_);
}

std::array<at::Tensor, 3> UnitRowsA::positions() const {
  const int64_t h = shape_[shape_.size() - 2], wd = shape_[shape_.size() - 1];
  return {at::div(index_, h * wd, "floor"), at::div(index_, wd, "floor").remainder(h), index_.remainder(wd)};
}

APtr UnitRowsA::as_patches(at::ScalarType dtype) const {
  if (!PatchesA::fits(shape_)) return nullptr;
  const int64_t c = shape_[shape_.size() - 3], s = rows();
  // row s = sign_s e_(c_s, y_s, x_s): a 1x1 patch with sign_s in channel c_s at (y_s, x_s)
  auto [ch, y, x] = positions();
  at::Tensor kernel = at::zeros({s, c}, at::TensorOptions().dtype(dtype));
  kernel.scatter_(1, ch.unsqueeze(1), sign_.to(dtype).unsqueeze(1));
  return std::make_shared<PatchesA>(shape_, kernel.view({s, c, 1, 1}), at::stack({y, x}, 1));
}

APtr UnitRowsA::through_conv(const at::Tensor& w, const Conv2dGeometry& g, const std::vector<int64_t>& in_shape,
                             at::ScalarType dtype) const {
  if (!PatchesA::fits(shape_) || !PatchesA::fits(in_shape)) return AMatrix::through_conv(w, g, in_shape, dtype);
  if (g.groups != 1 || g.dilation != std::vector<int64_t>{1, 1}) return as_patches(dtype)->through_conv(w, g, in_shape, dtype);
  // row sign_s e_(c_s, y_s, x_s) reads sign_s W[c_s] over the input window with its corner
  // at (y_s, x_s) * stride - pad: a row of the weight, no convolution
  auto [ch, y, x] = positions();
  at::Tensor kernel = w.to(dtype).index_select(0, ch) * sign_.to(dtype).view({-1, 1, 1, 1});
  at::Tensor origin = at::stack({y * g.stride[0] - g.pad[0], x * g.stride[1] - g.pad[1]}, 1);
  auto out = std::make_shared<PatchesA>(in_shape, kernel, origin);
  if (!out->smaller_than_dense()) return DenseA::make(out->dense(dtype));
  return out;
}

int64_t row_groups(const at::Tensor& t, size_t node_dims, int64_t rows) {
  if (t.dim() <= static_cast<int64_t>(node_dims)) return 1;
  const int64_t g = t.size(0);
  TESSERA_CHECK(g > 0 && (rows == 0 || rows % g == 0), DimensionMismatch, "A matrix of ", rows,
                " rows read a tensor of ", g, " row groups (must divide the rows)");
  return rows == 0 ? 1 : g;
}

at::Tensor per_row(const at::Tensor& t, int64_t rows) {
  const int64_t g = t.size(0);
  if (g == rows) return t;
  TESSERA_CHECK(g > 0 && rows % g == 0, DimensionMismatch, "cannot spread ", g, " row groups over ", rows, " rows");
  if (g == 1) {
    auto s = t.sizes().vec();
    s[0] = rows;
    return t.expand(s);
  }
  return t.repeat_interleave(rows / g, 0);  // row s: t[s / (rows / G)]
}

at::Tensor times_grouped(const at::Tensor& a, const at::Tensor& t) {
  if (t.dim() < a.dim()) return a * t;
  const int64_t s = a.size(0), g = t.size(0);
  if (g == 1 || g == s) return a * t;
  TESSERA_CHECK(s % g == 0, DimensionMismatch, "A matrix of ", s, " rows read a tensor of ", g, " row groups");
  std::vector<int64_t> grouped{g, s / g};
  grouped.insert(grouped.end(), a.sizes().begin() + 1, a.sizes().end());
  return (a.reshape(grouped) * t.unsqueeze(1)).reshape(a.sizes());  // A[g, r] * t[g]
}

bool held_alone(const at::Tensor& t) {
  return t.defined() && t.use_count() == 1 && t.storage().use_count() == 1 && !t.requires_grad();
}

namespace {

/// a's dense rows, a released first: a tensor nobody else holds stays held alone.
at::Tensor dense_of(APtr&& a, at::ScalarType dtype) {
  at::Tensor d = a->dense(dtype);
  a.reset();
  return d;
}

}  // namespace

APtr add_a(APtr a, APtr b, at::ScalarType dtype) {
  if (!a) return b;
  if (!b) return a;
  if (APtr p = add_patches(a, b, dtype)) return p;
  if (auto pb = std::dynamic_pointer_cast<const PatchesA>(b)) return DenseA::make(pb->plus(dense_of(std::move(a), dtype)));
  if (auto pa = std::dynamic_pointer_cast<const PatchesA>(a)) return DenseA::make(pa->plus(dense_of(std::move(b), dtype)));
  at::Tensor da = dense_of(std::move(a), dtype), db = dense_of(std::move(b), dtype).reshape(da.sizes());
  if (held_alone(da) && da.is_contiguous() && !db.requires_grad()) return DenseA::make(da.add_(db));  // in place
  return DenseA::make(da + db);  // A = A_a + A_b
}

}  // namespace tessera::lirpa
