// Tensor parallelism on CNNs: Conv split by output channels (column) and by input channels
// (row), a Flatten+Linear row consumer split by whole channels; the forward pass, IBP and
// CROWN against one process, soundness by sampling (points and corners), at 1, 2 and 4
// ranks; and the oval21 CIFAR CNN from ../shared/data.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "lirpa/mpi/shard_checks.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/mlp_builder.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/tensor_parallel.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::lirpa {
namespace {

using testing::Box;
using testing::box;
using testing::expect_sound;
using testing::rel_difference;

struct Cnn {
  std::string name;
  std::vector<int64_t> chw, channels, strides;
  int64_t outputs;
  size_t zones;  // column/row pairs
};

class TpConvMatches : public ::testing::TestWithParam<Cnn> {};

TEST_P(TpConvMatches, ForwardIbpAndCrownOfOneProcessAndSound) {
  // Cross-zone CROWN computes every bound as one process does: tolerance 1e-9 relative.
  auto comm = dist::world();
  const Cnn& c = GetParam();
  Graph g = build_relu_cnn(c.chw, c.channels, c.strides, c.outputs, 11);
  TpNetwork tp = tp_from_graph(g, comm);
  size_t zones = 0;
  for (const TpLayer& l : tp.layers()) zones += l.split == TpSplit::Column;
  EXPECT_EQ(zones, c.zones);
  EXPECT_TRUE(tp.layers().front().is_conv());
  const int64_t n = g.input_size();
  at::Tensor x = at::rand({7, n}, at::kDouble);
  comm->broadcast(x, 0);
  EXPECT_TRUE(at::allclose(tp.forward(x, at::kDouble), g.forward(x, at::kDouble), 1e-12, 1e-12));
  Box b = box(n, 0.02);
  for (Method m : {Method::Ibp, Method::Crown}) {
    BoundOptions o;
    o.method = m;
    BoundsResult one = compute_bounds(g, b.lo, b.hi, o);
    BoundsResult many = tp_compute_bounds(tp, b.lo, b.hi, o);
    EXPECT_LT(rel_difference(one, many), 1e-9) << c.name << " " << method_name(m) << " at " << comm->size()
                                                << " ranks";
    expect_sound(g, many, b.lo, b.hi, {}, c.name + " " + method_name(m), 3000);
  }
  // zone-local intermediate bounds: sound (looser on two zones)
  BoundOptions crown;
  crown.method = Method::Crown;
  TpOptions local;
  local.local_intermediate = true;
  expect_sound(g, tp_compute_bounds(tp, b.lo, b.hi, crown, {}, local), b.lo, b.hi, {}, c.name + " local", 3000);
}

INSTANTIATE_TEST_SUITE_P(
    Cnns, TpConvMatches,
    ::testing::Values(
        // conv (column, by output channels) -> ReLU -> Flatten+Linear (row, by channels)
        Cnn{"conv_linear", {2, 6, 6}, {6}, {1}, 5, 1},
        // conv -> ReLU -> conv (row, by input channels) -> ReLU -> Linear (replicated)
        Cnn{"conv_conv", {3, 8, 8}, {5, 6}, {2, 1}, 4, 1},
        // two zones: conv/conv, then conv/Flatten+Linear; 3 channels at 4 ranks: one rank has none
        Cnn{"two_zones", {2, 8, 8}, {4, 6, 3}, {1, 2, 1}, 3, 2}),
    [](const auto& info) { return info.param.name; });

TEST(TpConv, EachRankHoldsItsChannels) {
  auto comm = dist::world();
  Graph g = build_relu_cnn({3, 8, 8}, {8, 4}, {2, 2}, 4, 12);
  TpNetwork tp = tp_from_graph(g, comm);
  const TpLayer& col = tp.layers()[0];
  const TpLayer& row = tp.layers()[1];
  ASSERT_TRUE(col.is_conv() && row.is_conv());
  EXPECT_EQ(col.split, TpSplit::Column);
  EXPECT_EQ(row.split, TpSplit::Row);
  const int64_t mine = 8 / comm->size();                                    // 8 channels, P in {1, 2, 4}
  EXPECT_EQ(col.kernel.sizes(), (std::vector<int64_t>{mine, 3, 3, 3}));    // its output channels
  EXPECT_EQ(row.kernel.sizes(), (std::vector<int64_t>{4, mine, 3, 3}));    // the same block of input channels
  EXPECT_EQ(col.bias.numel(), mine * 4 * 4);                               // per neuron of its [mine, 4, 4]
  EXPECT_EQ(row.bias.numel(), 4 * 2 * 2);
}

TEST(TpConv, CifarNetworkFromSharedDataSplitsAndMatchesIbp) {
  // oval21 cifar_wide_kw: Conv 3->16 -> ReLU -> Conv 16->32 -> ReLU -> Flatten -> Gemm 100
  // -> ReLU -> Gemm 10: two zones (conv/conv, Flatten+Gemm/Gemm) on its img19 property box.
  // IBP here; CROWN (~10 s per run with dense rows on this machine) is compared with one
  // process by the ctests cli_bounds_tp_cnn_np2_*.
  const std::string dir = std::string(TESSERA_SHARED_DATA) + "/vnncomp2021/oval21/";
  auto comm = dist::world();
  Graph g = load_onnx(dir + "cifar_wide_kw.onnx");
  Property p = load_vnnlib(dir + "cifar_wide_kw-img19-eps0.007973856209150327.vnnlib");
  TpNetwork tp = tp_from_graph(g, comm);
  ASSERT_EQ(tp.layers().size(), 4u);
  EXPECT_TRUE(tp.layers()[0].is_conv() && tp.layers()[1].is_conv());
  const auto& c = p.cases.at(0);
  BoundOptions o;
  o.method = Method::Ibp;
  BoundsResult one = compute_bounds(g, c.lower, c.upper, o);
  BoundsResult many = tp_compute_bounds(tp, c.lower, c.upper, o);
  EXPECT_LT(rel_difference(one, many), 1e-9) << "ibp at " << comm->size() << " ranks";
  expect_sound(g, many, c.lower.reshape({-1}), c.upper.reshape({-1}), {}, "cifar ibp", 500);
}

}  // namespace
}  // namespace tessera::lirpa
