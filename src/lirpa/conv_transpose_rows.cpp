// The transposed convolution of many A rows at once (see conv_transpose_rows.h).
//
// For rows n, output positions (oy, ox) and kernel taps (ci, ky, kx):
//   A_x[n, ci, y, x] = sum_{co, oy, ox, ky, kx : y = oy s_h - p_h + ky d_h, x = ox s_w - p_w + kx d_w}
//                      W[co, ci, ky, kx] A_y[n, co, oy, ox]
// computed per chunk of rows in two steps:
//   C[(ci, ky, kx), (n, oy, ox)] = sum_co W[co, ci, ky, kx] A_y[n, co, oy, ox]   one GEMM, K = Co
//   A_x[n, ci, y, x]            += C[(ci, ky, kx), (n, oy, ox)]                  runs of ox scattered
// A_y's planes are moved to [co, (n, oy, ox)] whole (nothing transposed entry by entry), and
// the chunk's buffers are reused chunk after chunk. Each output entry sums its taps in the
// order (ky, kx) whatever the chunking or threads. On a gradient tape the backward is the
// adjoint, the convolution, the same way round: taps gathered, one GEMM W G, planes moved back.

#include "conv_transpose_rows.h"

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <algorithm>

#include "tessera/core/cpu_clones.h"

namespace tessera::lirpa::detail {
namespace {

using torch::autograd::variable_list;

constexpr int64_t kChunkBytes = int64_t(1) << 21;  // the chunk's product C: 2 MiB
constexpr int64_t kMinChannels = 8;                 // conv_transpose_any: fewer output channels of the rows go to ATen

struct Shape {
  int64_t co, ho, wo, ci, kh, kw, h, w, sh, sw, ph, pw, dh, dw;
};

// out [rows, Ci, H, W] += C's taps: for each tap (ci, ky, kx) and row, C's run over (oy, ox)
// added at y = oy s_h - p_h + ky d_h, x = ox s_w - p_w + kx d_w (the runs' valid ox found once per kx).
template <typename T>
[[gnu::always_inline]] inline void scatter_body(const T* __restrict c, T* __restrict out, const Shape& s,
                                                int64_t rows) {
  const int64_t run = rows * s.ho * s.wo;  // C's columns: (row, oy, ox)
  for (int64_t ci = 0; ci < s.ci; ++ci)
    for (int64_t ky = 0; ky < s.kh; ++ky)
      for (int64_t kx = 0; kx < s.kw; ++kx) {
        const T* tap = c + ((ci * s.kh + ky) * s.kw + kx) * run;
        const int64_t off = kx * s.dw - s.pw;  // x = ox s_w + off
        const int64_t ox0 = off >= 0 ? 0 : (-off + s.sw - 1) / s.sw;
        const int64_t ox1 = s.w - 1 - off < 0 ? 0 : std::min(s.wo, (s.w - 1 - off) / s.sw + 1);
        if (ox1 <= ox0) continue;
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t oy = 0; oy < s.ho; ++oy) {
            const int64_t y = oy * s.sh - s.ph + ky * s.dh;
            if (y < 0 || y >= s.h) continue;
            const T* __restrict src = tap + (r * s.ho + oy) * s.wo;
            T* __restrict dst = out + ((r * s.ci + ci) * s.h + y) * s.w;
            for (int64_t ox = ox0; ox < ox1; ++ox) dst[ox * s.sw + off] += src[ox];  // A_x[r, ci, y, x] += C[(ci, ky, kx), (r, oy, ox)]
          }
      }
}

TESSERA_CPU_CLONES void scatter(const double* c, double* out, const Shape& s, int64_t rows) {
  scatter_body(c, out, s, rows);
}
TESSERA_CPU_CLONES void scatter(const float* c, float* out, const Shape& s, int64_t rows) {
  scatter_body(c, out, s, rows);
}

// G[(ci, ky, kx), (row, oy, ox)] = x[row, ci, y, x] at y = oy s_h - p_h + ky d_h,
// x = ox s_w - p_w + kx d_w, 0 outside the node: scatter_body's taps read instead of added.
template <typename T>
[[gnu::always_inline]] inline void gather_body(const T* __restrict x, T* __restrict g, const Shape& s, int64_t rows) {
  const int64_t run = rows * s.ho * s.wo;
  for (int64_t ci = 0; ci < s.ci; ++ci)
    for (int64_t ky = 0; ky < s.kh; ++ky)
      for (int64_t kx = 0; kx < s.kw; ++kx) {
        T* tap = g + ((ci * s.kh + ky) * s.kw + kx) * run;
        const int64_t off = kx * s.dw - s.pw;
        const int64_t ox0 = std::min(s.wo, off >= 0 ? 0 : (-off + s.sw - 1) / s.sw);
        const int64_t ox1 = std::max(ox0, s.w - 1 - off < 0 ? 0 : std::min(s.wo, (s.w - 1 - off) / s.sw + 1));
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t oy = 0; oy < s.ho; ++oy) {
            T* __restrict dst = tap + (r * s.ho + oy) * s.wo;
            const int64_t y = oy * s.sh - s.ph + ky * s.dh;
            if (y < 0 || y >= s.h) {
              std::fill(dst, dst + s.wo, T(0));
              continue;
            }
            const T* __restrict src = x + ((r * s.ci + ci) * s.h + y) * s.w;
            std::fill(dst, dst + ox0, T(0));
            for (int64_t ox = ox0; ox < ox1; ++ox) dst[ox] = src[ox * s.sw + off];  // G = x[r, ci, y, x]
            std::fill(dst + ox1, dst + s.wo, T(0));
          }
      }
}

TESSERA_CPU_CLONES void gather(const double* x, double* g, const Shape& s, int64_t rows) { gather_body(x, g, s, rows); }
TESSERA_CPU_CLONES void gather(const float* x, float* g, const Shape& s, int64_t rows) { gather_body(x, g, s, rows); }

// Rows per chunk: the chunk's tap matrix [(ci, ky, kx), (row, oy, ox)] within kChunkBytes.
int64_t chunk_rows(const Shape& s, int64_t n, int64_t elem) {
  const int64_t per_row = s.ho * s.wo * s.ci * s.kh * s.kw * elem;
  return std::clamp<int64_t>(kChunkBytes / std::max<int64_t>(per_row, 1), 1, std::max<int64_t>(n, 1));
}

// body(n0, rows, taps, planes) for every chunk of rows, chunks in parallel, with two views of
// buffers reused chunk after chunk: taps [(ci, ky, kx), (row, oy, ox)], planes [Co, (row, oy, ox)].
template <typename F>
void for_chunks(const Shape& s, int64_t n, const at::TensorOptions& options, int64_t elem, const F& body) {
  const int64_t taps = s.ci * s.kh * s.kw, plane = s.ho * s.wo;
  const int64_t chunk = chunk_rows(s, n, elem), chunks = (n + chunk - 1) / chunk;
  at::parallel_for(0, chunks, 1, [&](int64_t first, int64_t last) {
    at::Tensor t = at::empty({taps * chunk * plane}, options), p = at::empty({s.co * chunk * plane}, options);
    for (int64_t k = first; k < last; ++k) {
      const int64_t n0 = k * chunk, rows = std::min(chunk, n - n0);
      body(n0, rows, t.narrow(0, 0, taps * rows * plane).view({taps, rows * plane}),
           p.narrow(0, 0, s.co * rows * plane).view({s.co, rows * plane}));
    }
  });
}

// A_x [n, Ci, H, W] (zeroed) = W^T * A_y [n, Co, Ho, Wo]; w_t is W^T [(ci, ky, kx), Co].
template <typename T>
void transpose_conv(const at::Tensor& a, const at::Tensor& w_t, const Shape& s, at::Tensor& out) {
  const int64_t plane = s.ho * s.wo;
  const T* in = a.data_ptr<T>();
  T* o = out.data_ptr<T>();
  for_chunks(s, a.size(0), a.options(), sizeof(T), [&](int64_t n0, int64_t rows, at::Tensor c, at::Tensor b) {
    // B[co, (row, oy, ox)] = A_y[n0 + row, co, oy, ox]: whole planes moved, nothing transposed
    T* bd = b.data_ptr<T>();
    for (int64_t co = 0; co < s.co; ++co)
      for (int64_t r = 0; r < rows; ++r) std::copy_n(in + ((n0 + r) * s.co + co) * plane, plane, bd + (co * rows + r) * plane);
    at::mm_out(c, w_t, b);  // C = W^T B, one product for the chunk
    scatter(c.data_ptr<T>(), o + n0 * s.ci * s.h * s.w, s, rows);
  });
}

// The adjoint: A_y [n, Co, Ho, Wo] = W * A_x [n, Ci, H, W] (the convolution), per chunk the
// taps gathered, one GEMM D = W G [Co, (row, oy, ox)], its planes moved back; w is [Co, (ci, ky, kx)].
template <typename T>
void convolve(const at::Tensor& x, const at::Tensor& w, const Shape& s, at::Tensor& out) {
  const int64_t plane = s.ho * s.wo;
  const T* in = x.data_ptr<T>();
  T* o = out.data_ptr<T>();
  for_chunks(s, x.size(0), x.options(), sizeof(T), [&](int64_t n0, int64_t rows, at::Tensor g, at::Tensor d) {
    gather(in + n0 * s.ci * s.h * s.w, g.data_ptr<T>(), s, rows);
    at::mm_out(d, w, g);  // D = W G
    const T* dd = d.data_ptr<T>();
    for (int64_t co = 0; co < s.co; ++co)
      for (int64_t r = 0; r < rows; ++r) std::copy_n(dd + (co * rows + r) * plane, plane, o + ((n0 + r) * s.co + co) * plane);
  });
}

/// The adjoint of the transposed convolution, the convolution: dA_y = W * dA_x.
class ConvTransposeRowsBackward final : public torch::autograd::Node {
 public:
  std::string name() const override { return "tessera::ConvTransposeRowsBackward"; }
  variable_list apply(variable_list&& grads) override {
    variable_list out(1);
    if (!grads[0].defined() || !should_compute_output(0)) return out;
    at::Tensor gx = grads[0].to(w_.scalar_type());
    if (at::GradMode::is_enabled() && gx.requires_grad()) {  // a second derivative: ATen's, recorded
      out[0] = at::conv2d(gx, w_.view({s_.co, s_.ci, s_.kh, s_.kw}), {}, {s_.sh, s_.sw}, {s_.ph, s_.pw},
                          {s_.dh, s_.dw}, 1);
      return out;
    }
    gx = gx.contiguous();
    at::Tensor dy = at::empty({gx.size(0), s_.co, s_.ho, s_.wo}, gx.options());
    if (gx.size(0) > 0) {
      if (gx.scalar_type() == at::kDouble) convolve<double>(gx, w_, s_, dy);
      else convolve<float>(gx, w_, s_, dy);
    }
    out[0] = dy;
    return out;
  }
  at::Tensor w_;  // [Co, (ci, ky, kx)]
  Shape s_;
};

}  // namespace

std::optional<at::Tensor> conv_transpose_rows(const at::Tensor& a, const at::Tensor& w,
                                              const std::vector<int64_t>& stride, const std::vector<int64_t>& pad,
                                              const std::vector<int64_t>& out_pad,
                                              const std::vector<int64_t>& dilation, int64_t groups) {
  const auto dtype = a.scalar_type();
  if (groups != 1 || a.dim() != 4 || w.dim() != 4 || !a.device().is_cpu() || !w.device().is_cpu() ||
      (dtype != at::kDouble && dtype != at::kFloat) || w.scalar_type() != dtype || w.requires_grad() ||
      a.size(1) != w.size(0) || stride.size() != 2 || pad.size() != 2 || out_pad.size() != 2 || dilation.size() != 2)
    return std::nullopt;
  Shape s{w.size(0), a.size(2), a.size(3), w.size(1), w.size(2), w.size(3), 0, 0,
          stride[0], stride[1], pad[0], pad[1], dilation[0], dilation[1]};
  s.h = (s.ho - 1) * s.sh - 2 * s.ph + s.dh * (s.kh - 1) + 1 + out_pad[0];
  s.w = (s.wo - 1) * s.sw - 2 * s.pw + s.dw * (s.kw - 1) + 1 + out_pad[1];
  if (s.h <= 0 || s.w <= 0 || s.sh <= 0 || s.sw <= 0 || s.dh <= 0 || s.dw <= 0) return std::nullopt;

  const bool taped = at::GradMode::is_enabled() && a.requires_grad();
  at::Tensor in = a.detach().contiguous();
  at::Tensor w_t = w.detach().reshape({s.co, s.ci * s.kh * s.kw}).t().contiguous();  // W^T [(ci, ky, kx), Co]
  at::Tensor out = at::zeros({a.size(0), s.ci, s.h, s.w}, a.options().requires_grad(false));
  {
    at::NoGradGuard off_tape;
    if (a.size(0) > 0) {
      if (dtype == at::kDouble) transpose_conv<double>(in, w_t, s, out);
      else transpose_conv<float>(in, w_t, s, out);
    }
  }
  if (taped) {
    std::shared_ptr<ConvTransposeRowsBackward> node(new ConvTransposeRowsBackward(), torch::autograd::deleteNode);
    node->w_ = w.detach().reshape({s.co, s.ci * s.kh * s.kw}).contiguous();
    node->s_ = s;
    node->set_next_edges(torch::autograd::collect_next_edges(a));
    torch::autograd::set_history(out, node);
  }
  return out;
}

at::Tensor conv_transpose_any(const at::Tensor& a, const at::Tensor& w, const std::vector<int64_t>& stride,
                              const std::vector<int64_t>& pad, const std::vector<int64_t>& out_pad,
                              const std::vector<int64_t>& dilation, int64_t groups) {
  // fewer than 8 input channels (an image's first convolution): ATen's, as fast there end to end
  if (w.dim() == 4 && w.size(1) >= kMinChannels)
    if (auto fast = conv_transpose_rows(a, w, stride, pad, out_pad, dilation, groups)) return *std::move(fast);
  return at::conv_transpose2d(a, w, {}, stride, pad, out_pad, groups, dilation);
}

}  // namespace tessera::lirpa::detail
