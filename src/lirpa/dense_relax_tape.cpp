// The one-pass relaxation of dense rows on a gradient tape (alpha-CROWN's and beta-CROWN's
// optimised passes): its backward in one pass too (see dense_relax.h).
//
// Forward, row i of group g (i / (S/G)):  x_ij = A+_ij dl_gj + A-_ij du_gj,
//                                         b_i  = sum_j A+_ij bl_gj + A-_ij bu_gj.
// Backward, with X = dL/dx and B = dL/db (A+ = max(A, 0), A- = min(A, 0); at A = 0 both
// sides pass, as autograd's clamp_min / clamp_max masks do):
//   dL/dA_ij  = [A_ij >= 0] (X_ij dl_gj + B_i bl_gj) + [A_ij <= 0] (X_ij du_gj + B_i bu_gj)
//   dL/ddl_gj = sum_{i in g} A+_ij X_ij     dL/dbl_gj = sum_{i in g} A+_ij B_i
//   dL/ddu_gj = sum_{i in g} A-_ij X_ij     dL/dbu_gj = sum_{i in g} A-_ij B_i
// then each summed back to the shape its tensor had before it was spread over the node.

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <algorithm>
#include <array>
#include <vector>

#include "dense_relax.h"
#include "tessera/core/cpu_clones.h"

namespace tessera::lirpa::detail {
namespace {

using torch::autograd::variable_list;

// One row of the backward pass, for A's row a, the upstream gradients x (of A_x's row) and b
// (of its constant), and the row's relaxation lines lo, lb, up, ub (d_l, b_l, d_u, b_u):
//   da   = [a >= 0] (x d_l + b b_l) + [a <= 0] (x d_u + b b_u)
//   d0 += a+ x,  d1 += a+ b,  d2 += a- x,  d3 += a- b   (the group's gradients of the lines)
// Branch-free, so it vectorises; compiled for AVX-512, AVX2 and the baseline on x86-64.
template <typename T>
[[gnu::always_inline]] inline void backward_row_body(const T* __restrict a, const T* __restrict x, T b,
                                                   const T* __restrict lo, const T* __restrict lb,
                                                   const T* __restrict up, const T* __restrict ub, T* __restrict da,
                                                   T* __restrict d0, T* __restrict d1, T* __restrict d2,
                                                   T* __restrict d3, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const T v = a[j], g = x[j];
    const T pos = std::max(v, T(0)), neg = std::min(v, T(0));
    const T from_lower = g * lo[j] + b * lb[j], from_upper = g * up[j] + b * ub[j];  // both loaded: selects vectorise
    da[j] = (v >= 0 ? from_lower : T(0)) + (v <= 0 ? from_upper : T(0));
    d0[j] += pos * g;
    d1[j] += pos * b;
    d2[j] += neg * g;
    d3[j] += neg * b;
  }
}

TESSERA_CPU_CLONES void backward_row(const double* a, const double* x, double b, const double* lo, const double* lb,
                                       const double* up, const double* ub, double* da, double* d0, double* d1,
                                       double* d2, double* d3, int64_t n) {
  backward_row_body(a, x, b, lo, lb, up, ub, da, d0, d1, d2, d3, n);
}
TESSERA_CPU_CLONES void backward_row(const float* a, const float* x, float b, const float* lo, const float* lb,
                                       const float* up, const float* ub, float* da, float* d0, float* d1, float* d2,
                                       float* d3, int64_t n) {
  backward_row_body(a, x, b, lo, lb, up, ub, da, d0, d1, d2, d3, n);
}

template <typename T>
void relax_backward_kernel(const at::Tensor& a, const std::array<at::Tensor, 4>& lines, const at::Tensor& gx,
                           const at::Tensor& gb, at::Tensor& da, std::array<at::Tensor, 4>& dlines) {
  const int64_t s = a.size(0), n = a.size(1);
  const T* ad = a.data_ptr<T>();
  const T* xd = gx.defined() ? gx.data_ptr<T>() : nullptr;
  const T* bd = gb.defined() ? gb.data_ptr<T>() : nullptr;
  T* dad = da.defined() ? da.data_ptr<T>() : nullptr;
  std::array<const T*, 4> l;
  std::array<T*, 4> dl;
  std::array<int64_t, 4> per_group;
  for (int k = 0; k < 4; ++k) {
    l[k] = lines[k].data_ptr<T>();
    per_group[k] = s / lines[k].size(0);
    dl[k] = dlines[k].defined() ? dlines[k].data_ptr<T>() : nullptr;
  }
  // columns split between threads: every thread owns its columns of each group's sums
  at::parallel_for(0, n, std::max<int64_t>(64, 16384 / std::max<int64_t>(s, 1)), [&](int64_t j0, int64_t j1) {
    const int64_t w = j1 - j0;
    // outputs not asked for, and a missing upstream gradient (0), go through scratch rows
    std::vector<T> zeros(xd ? 0 : w, T(0)), scratch(static_cast<size_t>(w) * 5);
    std::vector<RowWalk<const T>> in;
    std::vector<RowWalk<T>> grad;
    for (int k = 0; k < 4; ++k) {
      in.emplace_back(l[k] + j0, per_group[k], 0, n);
      // a line's gradient not asked for: a scratch row, never moved on
      grad.emplace_back(dl[k] ? dl[k] + j0 : scratch.data() + (k + 1) * w, dl[k] ? per_group[k] : s + 1, 0, n);
    }
    for (int64_t i = 0; i < s; ++i) {
      backward_row(ad + i * n + j0, xd ? xd + i * n + j0 : zeros.data(), bd ? bd[i] : T(0), in[0].next(),
                   in[1].next(), in[2].next(), in[3].next(), dad ? dad + i * n + j0 : scratch.data(), grad[0].next(),
                   grad[1].next(), grad[2].next(), grad[3].next(), w);
    }
  });
}

class DenseRelaxBackward final : public torch::autograd::Node {
 public:
  std::string name() const override { return "tessera::DenseRelaxBackward"; }

  variable_list apply(variable_list&& grads) override {
    const int64_t s = a_.size(0);
    at::Tensor gx = grads[0].defined() ? grads[0].reshape({s, -1}).to(a_.scalar_type()).contiguous() : at::Tensor();
    at::Tensor gb = grads[1].defined() ? grads[1].to(a_.scalar_type()).contiguous() : at::Tensor();
    at::Tensor da;
    if (should_compute_output(0)) da = at::empty_like(a_);
    std::array<at::Tensor, 4> dlines;
    for (int k = 0; k < 4; ++k)
      if (should_compute_output(k + 1)) dlines[k] = at::zeros_like(lines_[k]);
    if (a_.scalar_type() == at::kDouble) relax_backward_kernel<double>(a_, lines_, gx, gb, da, dlines);
    else relax_backward_kernel<float>(a_, lines_, gx, gb, da, dlines);
    variable_list out(5);
    if (da.defined()) out[0] = da.reshape(a_shape_).to(a_dtype_);
    for (int k = 0; k < 4; ++k) {
      if (!dlines[k].defined()) continue;
      std::vector<int64_t> grouped{dlines[k].size(0)};
      grouped.insert(grouped.end(), node_.begin(), node_.end());
      out[k + 1] = dlines[k].reshape(grouped).sum_to_size(shapes_[k]).to(dtypes_[k]);  // back to its own shape
    }
    return out;
  }

  at::Tensor a_;                        // [S, n], detached
  std::array<at::Tensor, 4> lines_;     // dl, bl, du, bu as [G, n], detached
  std::vector<int64_t> a_shape_, node_;
  at::ScalarType a_dtype_;
  std::array<std::vector<int64_t>, 4> shapes_;
  std::array<at::ScalarType, 4> dtypes_;
};

}  // namespace

void record_relax(const at::Tensor& a, const ElementwiseRelaxation& r, const std::array<at::Tensor, 4>& lines,
                  at::Tensor& ax, at::Tensor& bias) {
  std::shared_ptr<DenseRelaxBackward> node(new DenseRelaxBackward(), torch::autograd::deleteNode);
  node->a_ = a.detach().contiguous().reshape({a.size(0), -1});
  node->lines_ = lines;
  node->a_shape_ = a.sizes().vec();
  node->node_ = a.sizes().slice(1).vec();
  node->a_dtype_ = a.scalar_type();
  const std::array<const at::Tensor*, 4> given{&r.lower_d, &r.lower_b, &r.upper_d, &r.upper_b};
  for (int k = 0; k < 4; ++k) {
    if (!given[k]->defined()) continue;
    node->shapes_[k] = given[k]->sizes().vec();
    node->dtypes_[k] = given[k]->scalar_type();
  }
  // an undefined constant (zero) has no edge: collect_next_edges gives it an empty one
  node->set_next_edges(torch::autograd::collect_next_edges(a, r.lower_d, r.lower_b, r.upper_d, r.upper_b));
  torch::autograd::set_history(ax, node);
  torch::autograd::set_history(bias, node);
}

}  // namespace tessera::lirpa::detail
