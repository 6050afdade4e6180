// PatchesA: rows as small kernels over windows of a [C, H, W] node (convolution-aware A).

#include "tessera/lirpa/patches_a.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>

#include "conv_transpose_rows.h"
#include "dense_relax.h"
#include "tessera/core/error.h"

namespace tessera::lirpa {

using at::indexing::Slice;

namespace {

std::vector<int64_t> with_rows(int64_t s, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out{s};
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

// t over the node [1.., C, H, W], or [G, node...]: as [G, C, H*W]
at::Tensor grouped(const at::Tensor& t, const std::vector<int64_t>& shape, int64_t g) {
  const int64_t c = shape[shape.size() - 3], hw = shape[shape.size() - 2] * shape[shape.size() - 1];
  if (g == 1) {
    at::Tensor shared = t.dim() == static_cast<int64_t>(shape.size()) + 1 ? t.select(0, 0) : t;
    return shared.expand(shape).reshape({1, c, hw});
  }
  return t.expand(with_rows(g, shape)).reshape({g, c, hw});
}

// The part of a window with corner (y0, x0) and size kh x kw inside an h x w node, in the
// window's coordinates: rows [a0, a1), columns [j0, j1).
struct InsideNode {
  int64_t a0, a1, j0, j1;
  InsideNode(int64_t y0, int64_t x0, int64_t kh, int64_t kw, int64_t h, int64_t w)
      : a0(std::clamp<int64_t>(-y0, 0, kh)), a1(std::clamp<int64_t>(h - y0, a0, kh)),
        j0(std::clamp<int64_t>(-x0, 0, kw)), j1(std::clamp<int64_t>(w - x0, j0, kw)) {}
};

// Rows per piece of a parallel loop over patch rows of `entries` kernel entries each.
int64_t row_grain(int64_t entries) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(entries, 1)); }

// Over each row's window, the entries inside the node only (row s reads group s / (S / G)):
//   out[s] = sum_{c,i,j} K[s,c,i,j] v[g, c, y_s+i, x_s+j] - |K[s,c,i,j]| r[g, c, y_s+i, x_s+j]
// (the second sum only where r is given), without the windows' copies.
template <typename T>
void window_dots(const T* k, const int64_t* o, const T* v, const T* r, T* out, int64_t s, int64_t per_group,
                 int64_t c, int64_t h, int64_t w, int64_t kh, int64_t kw) {
  at::parallel_for(0, s, row_grain(c * kh * kw), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t y0 = o[2 * i], x0 = o[2 * i + 1], group = i / per_group;
      const InsideNode in(y0, x0, kh, kw, h, w);
      const int64_t j0 = in.j0, j1 = in.j1;
      T dot = 0, spread = 0;
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t a = in.a0; a < in.a1; ++a) {
          const T* kr = k + ((i * c + ch) * kh + a) * kw;
          const int64_t at_node = ((group * c + ch) * h + y0 + a) * w + x0;  // node row y0 + a, column x0
          for (int64_t j = j0; j < j1; ++j) dot += kr[j] * v[at_node + j];
          if (r != nullptr)
            for (int64_t j = j0; j < j1; ++j) spread += std::abs(kr[j]) * r[at_node + j];
        }
      out[i] = dot - spread;
    }
  });
}

}  // namespace

at::Tensor PatchesA::fused_window_dots(const at::Tensor& v, const at::Tensor& r) const {
  const at::ScalarType dtype = kernel_.scalar_type();
  const bool recorded =
      at::GradMode::is_enabled() && (kernel_.requires_grad() || v.requires_grad() || (r.defined() && r.requires_grad()));
  if (recorded || !kernel_.device().is_cpu() || (dtype != at::kDouble && dtype != at::kFloat)) return {};
  const int64_t s = rows(), g = row_groups(v, shape_.size(), s);
  if (r.defined() && row_groups(r, shape_.size(), s) != g) return {};
  at::Tensor vg = grouped(v.to(dtype), shape_, g).contiguous();
  at::Tensor rg = r.defined() ? grouped(r.to(dtype), shape_, g).contiguous() : at::Tensor();
  at::Tensor k = kernel_.contiguous(), corners = origin_.contiguous();
  at::Tensor out = at::empty({s}, k.options());
  if (s == 0) return out;
  AT_DISPATCH_FLOATING_TYPES(dtype, "PatchesA::window_dots", [&] {
    window_dots<scalar_t>(k.data_ptr<scalar_t>(), corners.data_ptr<int64_t>(), vg.data_ptr<scalar_t>(),
                          rg.defined() ? rg.data_ptr<scalar_t>() : nullptr, out.data_ptr<scalar_t>(), s, s / g, c_, h_,
                          w_, k.size(2), k.size(3));
  });
  return out;
}

bool PatchesA::smaller_than_dense() const {
  return kernel_.size(2) * kernel_.size(3) < h_ * w_;
}

bool PatchesA::fits(const std::vector<int64_t>& shape) {
  if (shape.size() < 3) return false;
  for (size_t i = 0; i + 3 < shape.size(); ++i)
    if (shape[i] != 1) return false;
  return true;
}

PatchesA::PatchesA(std::vector<int64_t> shape, at::Tensor kernel, at::Tensor origin)
    : shape_(std::move(shape)), kernel_(std::move(kernel)), origin_(std::move(origin)) {
  TESSERA_CHECK(fits(shape_), InvalidInput, "PatchesA needs a node shape [1.., C, H, W]");
  c_ = shape_[shape_.size() - 3], h_ = shape_[shape_.size() - 2], w_ = shape_[shape_.size() - 1];
  TESSERA_CHECK(kernel_.dim() == 4 && kernel_.size(1) == c_, DimensionMismatch, "PatchesA: kernel must be [S, ", c_,
                ", KH, KW]");
  TESSERA_CHECK(origin_.dim() == 2 && origin_.size(0) == kernel_.size(0) && origin_.size(1) == 2, DimensionMismatch,
                "PatchesA: origin must be [S, 2]");
  origin_ = origin_.to(at::kLong);
  for (int64_t& p : pad_) p = 0;
  if (kernel_.size(0) == 0) return;
  // pad so that every window [y, y + KH) x [x, x + KW) lies inside the padded node
  int64_t ylo = origin_.select(1, 0).min().item<int64_t>(), yhi = origin_.select(1, 0).max().item<int64_t>();
  int64_t xlo = origin_.select(1, 1).min().item<int64_t>(), xhi = origin_.select(1, 1).max().item<int64_t>();
  pad_[0] = std::max<int64_t>(0, -ylo);
  pad_[1] = std::max<int64_t>(0, yhi + kernel_.size(2) - h_);
  pad_[2] = std::max<int64_t>(0, -xlo);
  pad_[3] = std::max<int64_t>(0, xhi + kernel_.size(3) - w_);
}

at::Tensor PatchesA::windows(const at::Tensor& t) const {
  const int64_t s = rows(), kh = kernel_.size(2), kw = kernel_.size(3), hw = h_ * w_;
  const int64_t g = row_groups(t, shape_.size(), s);
  at::Tensor base = grouped(t, shape_, g);  // [G, C, H*W]
  // every window of the zero-padded node once (im2col), then each row's by its corner: when
  // the rows are at least as many as the windows, contiguous copies beat per-entry gathers
  const int64_t hp = h_ + pad_[0] + pad_[1], wp = w_ + pad_[2] + pad_[3];
  const int64_t ny = hp - kh + 1, nx = wp - kw + 1;
  if (s >= g * ny * nx) {
    at::Tensor padded = at::constant_pad_nd(base.view({g, c_, h_, w_}), {pad_[2], pad_[3], pad_[0], pad_[1]});
    at::Tensor all = at::im2col(padded, {kh, kw}, {1, 1}, {0, 0}, {1, 1});  // [G, C*KH*KW, NY*NX]
    all = all.transpose(1, 2).reshape({g * ny * nx, c_ * kh * kw});
    at::Tensor at_window = (origin_.select(1, 0) + pad_[0]) * nx + origin_.select(1, 1) + pad_[2];  // [S]
    if (g > 1) at_window = at_window + at::div(at::arange(s, origin_.options()), s / g, "floor") * (ny * nx);
    return all.index_select(0, at_window).view({s, c_, kh, kw});
  }
  // node coordinates of every window entry: y_s + i, x_s + j
  at::Tensor iy = origin_.select(1, 0).view({s, 1, 1}) + at::arange(kh, origin_.options()).view({1, kh, 1});
  at::Tensor ix = origin_.select(1, 1).view({s, 1, 1}) + at::arange(kw, origin_.options()).view({1, 1, kw});
  bool outside = pad_[0] || pad_[1] || pad_[2] || pad_[3];
  at::Tensor valid;
  if (outside) {  // read a clamped position, then zero what lies outside the node (no padded copy of t)
    valid = (iy >= 0).logical_and(iy < h_).logical_and(ix >= 0).logical_and(ix < w_);  // [S, KH, KW]
    iy = iy.clamp(0, h_ - 1);
    ix = ix.clamp(0, w_ - 1);
  }
  at::Tensor flat = (iy * w_ + ix).reshape({s, kh * kw});  // position in the flattened H x W plane
  at::Tensor out;
  if (g == s) {  // out[s, c, k] = t[s, c, flat[s, k]]
    out = base.gather(2, flat.unsqueeze(1).expand({s, c_, kh * kw}));
  } else {       // out[s, c, k] = t[s / (S/G), c, flat[s, k]]
    at::Tensor group = at::div(at::arange(s, origin_.options()), s / g, "floor").view({s, 1});
    at::Tensor at_group = (group * hw + flat).reshape({-1});
    out = base.permute({1, 0, 2}).reshape({c_, g * hw}).index_select(1, at_group).view({c_, s, kh * kw}).transpose(0, 1);
  }
  out = out.reshape({s, c_, kh, kw});
  if (outside) out = out * valid.unsqueeze(1).to(out.scalar_type());
  return out;
}

at::Tensor PatchesA::masked_kernel() const {
  if (!(pad_[0] || pad_[1] || pad_[2] || pad_[3])) return kernel_;
  const at::ScalarType dtype = kernel_.scalar_type();
  if ((at::GradMode::is_enabled() && kernel_.requires_grad()) || !kernel_.device().is_cpu() ||
      (dtype != at::kDouble && dtype != at::kFloat)) {
    at::Tensor ones = at::ones(shape_, kernel_.options());
    return kernel_ * windows(ones);  // zero the entries outside the node
  }
  // a copy with each row's entries outside the node set to zero, row by row
  const int64_t s = rows(), kh = kernel_.size(2), kw = kernel_.size(3);
  at::Tensor out = kernel_.contiguous().clone(), corners = origin_.contiguous();
  const int64_t* o = corners.data_ptr<int64_t>();
  AT_DISPATCH_FLOATING_TYPES(dtype, "PatchesA::masked_kernel", [&] {
    scalar_t* kd = out.data_ptr<scalar_t>();
    at::parallel_for(0, s, row_grain(c_ * kh * kw), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const InsideNode in(o[2 * i], o[2 * i + 1], kh, kw, h_, w_);
        const int64_t a0 = in.a0, a1 = in.a1, j0 = in.j0, j1 = in.j1;
        if (a0 == 0 && a1 == kh && j0 == 0 && j1 == kw) continue;  // the window lies inside the node
        for (int64_t ch = 0; ch < c_; ++ch)
          for (int64_t a = 0; a < kh; ++a) {
            scalar_t* kr = kd + ((i * c_ + ch) * kh + a) * kw;
            if (a < a0 || a >= a1) {
              std::fill(kr, kr + kw, scalar_t(0));
            } else {
              std::fill(kr, kr + j0, scalar_t(0));
              std::fill(kr + j1, kr + kw, scalar_t(0));
            }
          }
      }
    });
  });
  return out;
}

at::Tensor PatchesA::dense(at::ScalarType dtype) const {
  at::Tensor out = at::zeros(with_rows(rows(), shape_), kernel_.options().dtype(dtype));
  if (!adds_in_place(out)) return plus(out);
  add_into(out);  // no gradient recorded: the kernels added into the zeros
  return out;
}

bool PatchesA::adds_in_place(const at::Tensor& d) const {
  const at::ScalarType dtype = d.scalar_type();
  const bool recorded = at::GradMode::is_enabled() && (kernel_.requires_grad() || d.requires_grad());
  return !recorded && d.device().is_cpu() && (dtype == at::kDouble || dtype == at::kFloat);
}

void PatchesA::add_into(at::Tensor& out) const {
  const int64_t s = rows(), kh = kernel_.size(2), kw = kernel_.size(3);
  const at::ScalarType dtype = out.scalar_type();
  TESSERA_CHECK(adds_in_place(out) && out.is_contiguous(), InvalidInput, "PatchesA::add_into needs contiguous CPU rows");
  // each row's kernel entries inside the node added at their positions
  at::Tensor k = kernel_.to(dtype).contiguous(), corners = origin_.contiguous();
  const int64_t* o = corners.data_ptr<int64_t>();
  AT_DISPATCH_FLOATING_TYPES(dtype, "PatchesA::add_into", [&] {
    const scalar_t* kd = k.data_ptr<scalar_t>();
    scalar_t* od = out.data_ptr<scalar_t>();
    at::parallel_for(0, s, row_grain(c_ * kh * kw), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t y0 = o[2 * i], x0 = o[2 * i + 1];
        const InsideNode in(y0, x0, kh, kw, h_, w_);
        const int64_t j0 = in.j0, j1 = in.j1;
        for (int64_t ch = 0; ch < c_; ++ch) {
          for (int64_t a = in.a0; a < in.a1; ++a) {
            const scalar_t* kr = kd + ((i * c_ + ch) * kh + a) * kw;
            const int64_t at_node = ((i * c_ + ch) * h_ + y0 + a) * w_ + x0;  // node row y0 + a, column x0
            for (int64_t j = j0; j < j1; ++j) od[at_node + j] += kr[j];
          }
        }
      }
    });
  });
}

at::Tensor PatchesA::plus(at::Tensor d) const {
  const int64_t s = rows(), kh = kernel_.size(2), kw = kernel_.size(3);
  const at::ScalarType dtype = d.scalar_type();
  if (adds_in_place(d)) {  // no gradient recorded: out = d (itself when held alone), then the kernels added
    at::Tensor sum = held_alone(d) && d.is_contiguous() ? std::move(d) : d.contiguous().clone();
    add_into(sum);
    return sum;
  }
  at::Tensor out = at::zeros({s, c_, h_ + pad_[0] + pad_[1], w_ + pad_[2] + pad_[3]}, kernel_.options().dtype(dtype));
  at::Tensor r = at::arange(s, origin_.options()).view({s, 1, 1});
  at::Tensor iy = (origin_.select(1, 0) + pad_[0]).view({s, 1, 1}) + at::arange(kh, origin_.options()).view({1, kh, 1});
  at::Tensor ix = (origin_.select(1, 1) + pad_[2]).view({s, 1, 1}) + at::arange(kw, origin_.options()).view({1, 1, kw});
  out.index_put_({r, Slice(), iy, ix}, kernel_.to(dtype).permute({0, 2, 3, 1}));  // out[s, :, y_s+i, x_s+j] = K
  out = out.slice(2, pad_[0], pad_[0] + h_).slice(3, pad_[2], pad_[2] + w_);
  return d + out.reshape(with_rows(s, shape_));
}

at::Tensor PatchesA::contract(const at::Tensor& v) const {
  // sum_{c,i,j} K[s,c,i,j] v[c, y_s+i, x_s+j]
  if (at::Tensor fused = fused_window_dots(v, {}); fused.defined()) return fused;  // no gradient recorded
  return (kernel_ * windows(v.to(kernel_.scalar_type()))).sum({1, 2, 3});
}

at::Tensor PatchesA::concretize_lower(const at::Tensor& l, const at::Tensor& u) const {
  // min_x A x = A c - |A| r over the window (c, r zero outside the node; the box of each row's group)
  at::Tensor lf = l.to(kernel_.scalar_type()), uf = u.to(kernel_.scalar_type());
  at::Tensor center = (lf + uf) / 2, radius = (uf - lf) / 2;
  if (at::Tensor fused = fused_window_dots(center, radius); fused.defined()) return fused;  // no gradient recorded
  at::Tensor wc = windows(center), wr = windows(radius);
  return (kernel_ * wc).sum({1, 2, 3}) - (kernel_.abs() * wr).sum({1, 2, 3});
}

APtr PatchesA::reshaped(const std::vector<int64_t>& shape) const {
  if (fits(shape) && std::equal(shape.end() - 3, shape.end(), shape_.end() - 3))
    return std::make_shared<PatchesA>(shape, kernel_, origin_);  // only size-1 dims changed
  return DenseA::make(dense(kernel_.scalar_type()).reshape(with_rows(rows(), shape)));
}

RelaxedRows PatchesA::relax(const ElementwiseRelaxation& r, at::ScalarType dtype) const {
  at::Tensor k = kernel_.to(dtype);
  at::Tensor fused_bias;
  if (auto kx = detail::relax_patch_rows(k, origin_, shape_, r, fused_bias))  // no gradient recorded: one pass
    return {std::make_shared<PatchesA>(shape_, *kx, origin_), fused_bias};
  at::Tensor pos = k.clamp_min(0), neg = k.clamp_max(0);
  // K_x = K+ d_l + K- d_u on each window (zero outside the node)
  at::Tensor kx = pos * windows(r.lower_d.to(dtype)) + neg * windows(r.upper_d.to(dtype));
  at::Tensor bias = at::zeros({rows()}, k.options());
  if (r.lower_b.defined()) bias = bias + (pos * windows(r.lower_b.to(dtype))).sum({1, 2, 3});
  if (r.upper_b.defined()) bias = bias + (neg * windows(r.upper_b.to(dtype))).sum({1, 2, 3});
  return {std::make_shared<PatchesA>(shape_, kx, origin_), bias};
}

APtr PatchesA::through_conv(const at::Tensor& w, const Conv2dGeometry& g, const std::vector<int64_t>& in_shape,
                            at::ScalarType dtype) const {
  if (!fits(in_shape)) return AMatrix::through_conv(w, g, in_shape, dtype);
  // window of the input read by the window of the output: K_x = conv^T(K_y) (no padding),
  // its corner at y_s * stride - pad
  at::Tensor kx = detail::conv_transpose_any(masked_kernel().to(dtype), w.to(dtype), g.stride, {0, 0}, {0, 0},
                                             g.dilation, g.groups);
  at::Tensor step = at::tensor(g.stride, at::kLong).view({1, 2}), pad = at::tensor(g.pad, at::kLong).view({1, 2});
  auto out = std::make_shared<PatchesA>(in_shape, kx, origin_ * step - pad);
  if (!out->smaller_than_dense()) return DenseA::make(out->dense(dtype));
  return out;
}

namespace {

/// `a` as patches: itself, unit rows as 1x1 patches, or nullptr.
std::shared_ptr<const PatchesA> patches_of(const APtr& a, at::ScalarType dtype) {
  if (auto p = std::dynamic_pointer_cast<const PatchesA>(a)) return p;
  if (auto u = std::dynamic_pointer_cast<const UnitRowsA>(a)) return std::dynamic_pointer_cast<const PatchesA>(u->as_patches(dtype));
  return nullptr;
}

}  // namespace

APtr add_patches(APtr& a, APtr& b, at::ScalarType dtype) {
  if (a->rows() != b->rows() || a->rows() == 0 || a->node_shape() != b->node_shape()) return nullptr;
  auto pa = patches_of(a, dtype);
  auto pb = pa ? patches_of(b, dtype) : nullptr;
  if (!pb) return nullptr;
  // b's window corner relative to a's, the same in every row (else no common window)
  at::Tensor rel = pb->origin() - pa->origin();  // [S, 2]
  if (!rel.eq(rel.narrow(0, 0, 1)).all().item<bool>()) return nullptr;
  const int64_t ry = rel[0][0].item<int64_t>(), rx = rel[0][1].item<int64_t>();
  const at::Tensor &ka = pa->kernel(), &kb = pb->kernel();
  // union window [top, bottom) x [left, right) in a's window coordinates
  const int64_t top = std::min<int64_t>(0, ry), left = std::min<int64_t>(0, rx);
  const int64_t bottom = std::max(ka.size(2), ry + kb.size(2)), right = std::max(ka.size(3), rx + kb.size(3));
  const auto& node = pa->node_shape();
  if ((bottom - top) * (right - left) >= node[node.size() - 2] * node[node.size() - 1]) return nullptr;  // as dense
  // K = K_a + K_b, each placed at its corner in the union window: a copy of the kernel whose
  // window is the union with the other added into its place, else both placed into zeros
  auto place = [](at::Tensor& k, const at::Tensor& src, int64_t y, int64_t x) {
    return k.narrow(2, y, src.size(2)).narrow(3, x, src.size(3));
  };
  at::Tensor a_k = ka.to(dtype), b_k = kb.to(dtype), a_origin = pa->origin();
  const std::vector<int64_t> node_shape = node;
  const bool a_union = top == 0 && left == 0 && bottom == ka.size(2) && right == ka.size(3);
  const bool b_union = top == ry && left == rx && bottom == ry + kb.size(2) && right == rx + kb.size(3);
  pa.reset(), pb.reset(), a.reset(), b.reset();  // a kernel nobody else holds is now held alone (ka, kb dangle)
  at::Tensor k;
  if (a_union) {
    k = held_alone(a_k) && a_k.is_contiguous() ? a_k : a_k.clone();
    place(k, b_k, ry, rx).add_(b_k);
  } else if (b_union) {
    k = held_alone(b_k) && b_k.is_contiguous() ? b_k : b_k.clone();
    place(k, a_k, -top, -left).add_(a_k);  // K_b + K_a: the same sums
  } else {
    k = at::zeros({a_k.size(0), a_k.size(1), bottom - top, right - left}, a_k.options());
    place(k, a_k, -top, -left).copy_(a_k);
    place(k, b_k, ry - top, rx - left).add_(b_k);
  }
  at::Tensor corner = at::tensor(std::vector<int64_t>{top, left}, at::kLong).view({1, 2});
  return std::make_shared<PatchesA>(node_shape, k, a_origin + corner);
}

}  // namespace tessera::lirpa
