#pragma once
// Random test networks (MLP, CNN, residual; built by the library) and a sampling check.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "lirpa/node_values.h"
#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/onnx_builder.h"
#include "tessera/lirpa/random_networks.h"

namespace tessera::lirpa::testing {

inline at::Tensor randn(std::vector<int64_t> s, double scale = 1.0) { return at::randn(s, at::kDouble) * scale; }

/// Every node's value at the points x [N, n_in] (float64).
inline std::vector<at::Tensor> node_values(const Graph& g, const at::Tensor& x) { return detail::node_values(g, x); }

// The builders live in the library (tessera/lirpa/random_networks.h), shared with the
// soundness campaign (`tessera bench soundness`).
using lirpa::random_cnn;
using lirpa::random_conv_chain;
using lirpa::random_mlp;
using lirpa::random_residual;

/// Samples `n` points of the box (plus its corners' worth of extremes through uniform
/// sampling) and checks every output against IBP, CROWN and alpha-CROWN bounds; also that
/// alpha-CROWN is at least as tight as CROWN. `tol` absorbs rounding.
inline void expect_sound(const Graph& g, const at::Tensor& lo, const at::Tensor& hi, int64_t n,
                         at::ScalarType dtype = at::kDouble, double tol = 1e-9) {
  at::Tensor x = lo + (hi - lo) * at::rand({n, lo.numel()}, at::kDouble);
  // also the vertices of the box along random sign patterns
  at::Tensor corners = at::where(at::rand({64, lo.numel()}, at::kDouble) > 0.5, hi, lo);
  x = at::cat({x, corners});
  at::Tensor y = g.forward(x, at::kDouble);
  at::Tensor ymin = std::get<0>(y.min(0)), ymax = std::get<0>(y.max(0));
  BoundsResult crown;
  for (Method m : {Method::Ibp, Method::Crown, Method::AlphaCrown}) {
    BoundOptions o;
    o.method = m;
    o.dtype = dtype;
    BoundsResult r = compute_bounds(g, lo, hi, o);
    at::Tensor l = r.lower.to(at::kDouble), u = r.upper.to(at::kDouble);
    double scale = 1 + y.abs().max().item<double>();
    EXPECT_TRUE((l <= ymin + tol * scale).all().item<bool>()) << method_name(m) << " lower " << l << " min " << ymin;
    EXPECT_TRUE((u >= ymax - tol * scale).all().item<bool>()) << method_name(m) << " upper " << u << " max " << ymax;
    if (m == Method::Crown) crown = r;
    if (m == Method::AlphaCrown) {
      EXPECT_TRUE((l >= crown.lower.to(at::kDouble) - tol * scale).all().item<bool>()) << "alpha looser than CROWN";
      EXPECT_TRUE((u <= crown.upper.to(at::kDouble) + tol * scale).all().item<bool>()) << "alpha looser than CROWN";
    }
  }
}

}  // namespace tessera::lirpa::testing
