// Tensor parallelism by heads (load_onnx_shares): on a transformer block built here (pre-norm
// free: projections, 4 heads of softmax attention with a bias per head, output projection,
// residual, ReLU MLP, residual), with Q, K, V as three Linears or as one fused Linear cut by a
// Split, each rank loads its heads' and MLP columns' share; its IBP and CROWN bounds equal one
// process's (the whole network loaded on each rank) to 1e-9 relative, the same bits on every
// rank, contain 10^4 sampled outputs, and the share holds 1/P of every projection. At 1, 2 and
// 4 ranks.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <string>

#include "lirpa/mpi/shard_checks.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/onnx_builder.h"

namespace tessera::lirpa {
namespace {

constexpr int64_t kTokens = 3, kDim = 8, kHeads = 4, kHidden = 8;

/// y = h + W2 relu(W1 h + b1) + b2,  h = x + Wo attention(x) + bo: 4 heads of width 2.
std::string block(bool fused, int64_t heads = kHeads) {
  at::manual_seed(11);
  const int64_t dh = kDim / heads;
  OnnxBuilder b("x", {1, kTokens, kDim});
  auto w = [&](const std::string& name, std::vector<int64_t> shape) {
    return b.constant(name, at::randn(shape, at::kDouble) * 0.5);
  };
  auto heads_of = [&](const std::string& v, std::vector<int64_t> perm) {  // [1, n, d] -> [1, h, ., .]
    std::string r = b.node("Reshape", {v, b.constant(v + "_shape", at::tensor({int64_t{1}, kTokens, heads, dh}))});
    return b.node("Transpose", {r}, {OnnxAttr::list("perm", perm)});
  };
  std::string q, k, v;
  if (!fused) {
    auto linear = [&](const std::string& name) {
      return b.node("Add", {w(name + "_b", {kDim}), b.node("MatMul", {b.input(), w(name, {kDim, kDim})})});
    };
    q = heads_of(linear("q"), {0, 2, 1, 3});
    k = heads_of(linear("k"), {0, 2, 3, 1});  // K^T
    v = heads_of(linear("v"), {0, 2, 1, 3});
  } else {  // [1, n, 3d] -> [1, n, 3, h, dh] -> [3, 1, h, n, dh] -> three [1, h, n, dh]
    std::string qkv = b.node("Add", {b.node("MatMul", {b.input(), w("qkv", {kDim, 3 * kDim})}), w("qkv_b", {3 * kDim})});
    std::string r = b.node("Reshape", {qkv, b.constant("qkv_shape", at::tensor({int64_t{1}, kTokens, int64_t{3}, heads, dh}))});
    std::string t = b.node("Transpose", {r}, {OnnxAttr::list("perm", {2, 0, 3, 1, 4})});
    auto parts = b.node_with_outputs("Split", {t}, 3, {OnnxAttr::integer("axis", 0)});
    auto squeeze = [&](const std::string& p) { return b.node("Squeeze", {p, b.constant(p + "_axes", at::tensor({int64_t{0}}))}); };
    q = squeeze(parts[0]);
    k = b.node("Transpose", {squeeze(parts[1])}, {OnnxAttr::list("perm", {0, 1, 3, 2})});
    v = squeeze(parts[2]);
  }
  std::string scores = b.node("Mul", {b.node("MatMul", {q, k}), b.constant("scale", at::tensor(0.7, at::kDouble))});
  scores = b.node("Add", {scores, w("relative_bias", {1, heads, kTokens, kTokens})});  // one per head: cut by rank
  std::string att = b.node("Softmax", {scores}, {OnnxAttr::integer("axis", 3)});
  std::string o = b.node("Transpose", {b.node("MatMul", {att, v})}, {OnnxAttr::list("perm", {0, 2, 1, 3})});
  o = b.node("Reshape", {o, b.constant("o_shape", at::tensor({int64_t{1}, kTokens, kDim}))});
  std::string h = b.node("Add", {b.input(), b.node("Add", {b.node("MatMul", {o, w("wo", {kDim, kDim})}), w("bo", {kDim})})});
  std::string m = b.node("Relu", {b.node("Add", {b.node("MatMul", {h, w("w1", {kDim, kHidden})}), w("b1", {kHidden})})});
  b.set_output(b.node("Add", {h, b.node("Add", {b.node("MatMul", {m, w("w2", {kHidden, kDim})}), w("b2", {kDim})})}));
  return b.bytes();
}

double rel(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>() / (1 + b.abs().max().item<double>());
}

TEST(TpHeads, BoundsOfTheSharesAreOneProcesssOnEveryRank) {
  auto comm = dist::world();
  for (bool fused : {false, true}) {
    SCOPED_TRACE(fused ? "fused QKV" : "separate Q, K, V");
    const std::string bytes = block(fused);
    const Graph whole = load_onnx_bytes(bytes, "block");
    ZoneSplit found;
    const Graph share = load_onnx_bytes_shares(bytes, "block", comm, &found);
    EXPECT_EQ(found.attention, 1);
    EXPECT_EQ(found.mlp, 1);
    at::manual_seed(3);  // the same box on every rank
    at::Tensor centre = at::rand({whole.input_size()}, at::kDouble);
    at::Tensor lo = centre - 0.05, hi = centre + 0.05;
    at::Tensor x = lo + (hi - lo) * at::rand({10000, whole.input_size()}, at::kDouble);
    at::Tensor y = whole.forward(x, at::kDouble);
    EXPECT_LT(rel(share.forward(x, at::kDouble), y), 1e-12);  // the shares compute the network
    for (Method method : {Method::Ibp, Method::Crown}) {
      SCOPED_TRACE(method_name(method));
      BoundOptions o;
      o.method = method;
      BoundsResult one = compute_bounds(whole, lo, hi, o);
      BoundsResult many = compute_bounds(share, lo, hi, o);
      EXPECT_LT(rel(many.lower, one.lower), 1e-9);
      EXPECT_LT(rel(many.upper, one.upper), 1e-9);
      EXPECT_TRUE(at::isfinite(many.lower).all().item<bool>());
      EXPECT_TRUE((y >= many.lower.unsqueeze(0) - 1e-9).all().item<bool>()) << "a sampled output below the bound";
      EXPECT_TRUE((y <= many.upper.unsqueeze(0) + 1e-9).all().item<bool>()) << "a sampled output above the bound";
      testing::expect_same_on_every_rank(many.lower, *comm);
      testing::expect_same_on_every_rank(many.upper, *comm);
    }
  }
}

TEST(TpHeads, SharesHoldTheirPartOfTheWeights) {
  auto comm = dist::world();
  const std::string bytes = block(false);
  const Graph whole = load_onnx_bytes(bytes, "block");
  const Graph share = load_onnx_bytes_shares(bytes, "block", comm);
  auto bytes_of = [](const Graph& g) {
    int64_t n = 0;
    for (const auto& key : g.params().keys()) {
      const auto s = g.params().shape(key);
      if (s.size() == 2) n += s[0] * s[1];  // the projections' matrices
    }
    return n;
  };
  // every matrix lies in a zone: Q, K, V and W1 by columns, Wo and W2 by rows
  EXPECT_EQ(bytes_of(share) * comm->size(), bytes_of(whole));
}

TEST(TpHeads, RefusesWhatItCannotSplit) {
  auto comm = dist::world();
  if (comm->size() == 1) GTEST_SKIP() << "one rank splits everything";
  // 1 head (and a MLP of 8 columns, which still splits): attention stays whole
  ZoneSplit found;
  (void)load_onnx_bytes_shares(block(false, 1), "block", comm, &found);
  EXPECT_EQ(found.attention, 0);
  EXPECT_EQ(found.mlp, 1);
  // no block at all: a single Linear
  OnnxBuilder b("x", {1, 4});
  b.set_output(b.node("MatMul", {b.input(), b.constant("w", at::ones({4, 4}, at::kDouble))}));
  EXPECT_THROW(load_onnx_bytes_shares(b.bytes(), "linear", comm), Unsupported);
}

}  // namespace
}  // namespace tessera::lirpa
