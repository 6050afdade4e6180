#include "tessera/lirpa/random_networks.h"

#include <ATen/ATen.h>

#include <cmath>

#include "tessera/lirpa/onnx_builder.h"

namespace tessera::lirpa {
namespace {

at::Tensor randn(std::vector<int64_t> shape, double scale) { return at::randn(shape, at::kDouble) * scale; }

// "w3" from ("w", 3) (appended: gcc 12's -Wstringop-overflow misreads "w" + std::to_string(3))
std::string indexed(const char* prefix, size_t i) {
  std::string name = prefix;
  name += std::to_string(i);
  return name;
}

}  // namespace

std::string random_mlp(int64_t n_in, std::vector<int64_t> hidden, int64_t n_out, const std::string& activation) {
  OnnxBuilder b("x", {1, n_in});
  std::string cur = b.input();
  int64_t prev = n_in;
  hidden.push_back(n_out);
  for (size_t i = 0; i < hidden.size(); ++i) {
    auto w = b.constant(indexed("w", i), randn({hidden[i], prev}, 1.0 / std::sqrt(double(prev))));
    auto bias = b.constant(indexed("b", i), randn({hidden[i]}, 0.1));
    cur = b.node("Gemm", {cur, w, bias}, {OnnxAttr::integer("transB", 1)});
    if (i + 1 < hidden.size()) cur = b.node(activation, {cur});
    prev = hidden[i];
  }
  b.set_output(cur);
  return b.bytes();
}

std::string random_cnn(const std::string& pool) {
  OnnxBuilder b("x", {1, 2, 8, 8});
  auto w1 = b.constant("c1.w", randn({4, 2, 3, 3}, 0.4));
  auto b1 = b.constant("c1.b", randn({4}, 0.1));
  auto c1 = b.node("Conv", {b.input(), w1, b1},
                   {OnnxAttr::list("strides", {1, 1}), OnnxAttr::list("pads", {1, 1, 1, 1})});
  auto bn = b.node("BatchNormalization", {c1, b.constant("bn.s", at::rand({4}, at::kDouble) + 0.5),
                                          b.constant("bn.b", randn({4}, 0.1)), b.constant("bn.m", randn({4}, 0.1)),
                                          b.constant("bn.v", at::rand({4}, at::kDouble) + 0.5)});
  auto r1 = b.node("Relu", {bn});
  auto p = b.node(pool, {r1}, {OnnxAttr::list("kernel_shape", {2, 2}), OnnxAttr::list("strides", {2, 2})});
  auto w2 = b.constant("c2.w", randn({3, 4, 3, 3}, 0.3));
  auto c2 = b.node("Conv", {p, w2}, {OnnxAttr::list("strides", {2, 2}), OnnxAttr::list("pads", {1, 1, 1, 1})});
  auto r2 = b.node("Relu", {c2});
  auto f = b.node("Flatten", {r2}, {OnnxAttr::integer("axis", 1)});
  auto w3 = b.constant("fc.w", randn({3 * 2 * 2, 5}, 0.4));
  b.set_output(b.node("Add", {b.node("MatMul", {f, w3}), b.constant("fc.b", randn({5}, 0.1))}));
  return b.bytes();
}

std::string random_conv_chain() {
  OnnxBuilder b("x", {1, 2, 7, 7});
  auto conv = [&](const std::string& in, const std::string& name, std::vector<int64_t> w_shape,
                  std::vector<OnnxAttr> attrs) {
    double scale = 1.5 / std::sqrt(double(w_shape[1] * w_shape[2] * w_shape[3]));
    auto w = b.constant(name + ".w", randn(w_shape, scale));
    auto bias = b.constant(name + ".b", randn({w_shape[0]}, 0.1));
    return b.node("Conv", {in, w, bias}, std::move(attrs));
  };
  auto x = b.node("Sub", {b.input(), b.constant("mean", randn({1, 2, 1, 1}, 0.1))});
  x = b.node("Div", {x, b.constant("std", at::rand({1, 2, 1, 1}, at::kDouble) + 0.5)});
  auto c1 = conv(x, "c1", {4, 1, 3, 3},  // [4, 7, 7]
                 {OnnxAttr::list("pads", {2, 2, 2, 2}), OnnxAttr::list("dilations", {2, 2}), OnnxAttr::integer("group", 2)});
  auto bn = b.node("BatchNormalization", {c1, b.constant("bn.s", at::rand({4}, at::kDouble) + 0.5),
                                          b.constant("bn.b", randn({4}, 0.1)), b.constant("bn.m", randn({4}, 0.1)),
                                          b.constant("bn.v", at::rand({4}, at::kDouble) + 0.5)});
  auto r1 = b.node("Relu", {bn});
  auto c2 = conv(r1, "c2", {4, 2, 3, 3},  // [4, 4, 4]
                 {OnnxAttr::list("strides", {2, 2}), OnnxAttr::list("pads", {1, 1, 1, 1}), OnnxAttr::integer("group", 2)});
  auto c3 = conv(c2, "c3", {3, 4, 2, 2}, {OnnxAttr::list("pads", {1, 1, 1, 1})});  // [3, 5, 5]
  auto r3 = b.node("Relu", {c3});
  auto c4 = conv(r3, "c4", {4, 3, 2, 2}, {OnnxAttr::list("strides", {2, 2})});  // [4, 2, 2]: row/col 4 unread
  auto r4 = b.node("Relu", {c4});
  auto f = b.node("Flatten", {r4}, {OnnxAttr::integer("axis", 1)});
  b.set_output(b.node("Gemm", {f, b.constant("fc.w", randn({3, 16}, 0.4)), b.constant("fc.b", randn({3}, 0.1))},
                      {OnnxAttr::integer("transB", 1)}));
  return b.bytes();
}

std::string random_residual(int64_t n) {
  OnnxBuilder b("x", {1, n});
  auto h = b.node("Relu", {b.node("Gemm", {b.input(), b.constant("w1", randn({n, n}, 0.5)), b.constant("b1", randn({n}, 0.1))})});
  auto g = b.node("Gemm", {h, b.constant("w2", randn({n, n}, 0.5)), b.constant("b2", randn({n}, 0.1))});
  auto s = b.node("Add", {g, b.input()});
  auto d = b.node("Sub", {s, b.node("Mul", {h, b.constant("k", at::full({1}, 0.5, at::kDouble))})});
  auto r = b.node("Relu", {b.node("Reshape", {d, b.constant("shape", at::tensor(std::vector<int64_t>{1, n}, at::kLong))})});
  b.set_output(b.node("Gemm", {r, b.constant("w3", randn({n, 3}, 0.5)), b.constant("b3", randn({3}, 0.1))}));
  return b.bytes();
}

std::string random_attention(int64_t tokens, int64_t dim) {
  OnnxBuilder b("x", {1, tokens * dim});
  auto shape = [&](const std::string& name, std::vector<int64_t> v) {
    return b.constant(name, at::tensor(v, at::kLong));
  };
  auto weight = [&](const std::string& name) { return b.constant(name, randn({dim, dim}, 1.0 / std::sqrt(double(dim)))); };
  auto h = b.node("Reshape", {b.input(), shape("tokens", {1, tokens, dim})});  // [1, T, D]
  auto q = b.node("MatMul", {h, weight("wq")});
  auto k = b.node("MatMul", {h, weight("wk")});
  auto v = b.node("MatMul", {h, weight("wv")});
  auto kt = b.node("Transpose", {k}, {OnnxAttr::list("perm", {0, 2, 1})});                  // [1, D, T]
  auto scores = b.node("Mul", {b.node("MatMul", {q, kt}), b.constant("scale", at::full({1}, 1.0 / std::sqrt(double(dim)), at::kDouble))});
  auto p = b.node("Softmax", {scores}, {OnnxAttr::integer("axis", -1)});                   // [1, T, T]
  auto r = b.node("Add", {b.node("MatMul", {p, v}), h});                                   // attention + x
  auto m = b.node("Relu", {b.node("Add", {b.node("MatMul", {r, weight("w1")}), b.constant("b1", randn({dim}, 0.1))})});
  auto f = b.node("Reshape", {m, shape("flat", {1, tokens * dim})});
  b.set_output(b.node("Gemm", {f, b.constant("wo", randn({3, tokens * dim}, 1.0 / std::sqrt(double(tokens * dim)))),
                              b.constant("bo", randn({3}, 0.1))},
                      {OnnxAttr::integer("transB", 1)}));
  return b.bytes();
}

}  // namespace tessera::lirpa
