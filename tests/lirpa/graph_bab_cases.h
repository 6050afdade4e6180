#pragma once
// Networks and problems for the graph branch-and-bound tests: random CNNs, a small ResNet and
// a residual MLP, each with a random box and specification rows.

#include <ATen/ATen.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "lirpa/bab/graph_bab.h"
#include "random_nets.h"

namespace tessera::lirpa::testing {

/// A small ResNet on [1, 2, 6, 6]: Conv -> Relu (r0) -> [Conv -> Relu (r1) -> Conv] + r0 ->
/// Relu (r2) -> Flatten -> Gemm (3 outputs); r1 lies inside the residual block.
inline std::string random_resnet() {
  OnnxBuilder b("x", {1, 2, 6, 6});
  auto conv = [&](const std::string& in, const std::string& name, int64_t cin, int64_t cout) {
    auto w = b.constant(name + ".w", randn({cout, cin, 3, 3}, 1.2 / std::sqrt(9.0 * cin)));
    auto bias = b.constant(name + ".b", randn({cout}, 0.1));
    return b.node("Conv", {in, w, bias}, {OnnxAttr::list("pads", {1, 1, 1, 1})});
  };
  auto r0 = b.node("Relu", {conv(b.input(), "c0", 2, 3)});
  auto r1 = b.node("Relu", {conv(r0, "c1", 3, 3)});
  auto s = b.node("Add", {conv(r1, "c2", 3, 3), r0});  // the residual connection
  auto r2 = b.node("Relu", {s});
  auto f = b.node("Flatten", {r2}, {OnnxAttr::integer("axis", 1)});
  b.set_output(b.node("Gemm", {f, b.constant("fc.w", randn({3, 3 * 36}, 0.2)),
                               b.constant("fc.b", randn({3}, 0.1))},
                      {OnnxAttr::integer("transB", 1)}));
  return b.bytes();
}

/// Specification rows for k rows of n_out outputs: y_0 - y_i (i >= 1), then y_0.
inline at::Tensor spec_rows(int64_t k, int64_t n_out) {
  // rows y_0 - y_i (i >= 1) and y_0
  std::vector<at::Tensor> rows;
  for (int64_t i = 1; i < n_out && static_cast<int64_t>(rows.size()) + 1 < k; ++i) {
    at::Tensor r = at::zeros({n_out}, at::kDouble);
    r[0] = 1;
    r[i] = -1;
    rows.push_back(r);
  }
  at::Tensor e0 = at::zeros({n_out}, at::kDouble);
  e0[0] = 1;
  rows.push_back(e0);
  return at::stack(rows);
}

struct Case {
  std::string name;
  std::string onnx;
  double eps;
};

inline std::vector<Case> cases() {
  std::vector<Case> out;
  at::manual_seed(11);
  out.push_back({"cnn-maxpool", random_cnn("MaxPool"), 0.3});
  out.push_back({"cnn-avgpool", random_cnn("AveragePool"), 0.3});
  out.push_back({"conv-chain", random_conv_chain(), 0.3});
  out.push_back({"resnet", random_resnet(), 0.3});
  out.push_back({"residual-mlp", random_residual(4), 0.5});
  out.push_back({"mlp", random_mlp(5, {16, 16, 16}, 5, "Relu"), 0.4});  // forward forms (few inputs)
  return out;
}

/// A case's network and ReLU nodes, a random box of half-width `eps` around a point, and the
/// specification rows spec_rows(k) with rhs 0.
struct Problem {
  Graph g;
  std::vector<detail::GraphRelu> relus;
  at::Tensor lo, hi, c, rhs;
};

inline Problem problem(const Case& cs, int64_t k) {
  Graph g = load_onnx_bytes(cs.onnx);
  auto relus = detail::graph_relus(g);
  at::Tensor x0 = at::randn({g.input_size()}, at::kDouble) * 0.5;
  at::Tensor c = spec_rows(k, g.output_size());
  at::Tensor rhs = at::zeros({c.size(0)}, at::kDouble);
  return {std::move(g), std::move(relus), x0 - cs.eps, x0 + cs.eps, c, rhs};
}

}  // namespace tessera::lirpa::testing
