// Every benchmark network loads and its forward pass matches an independent evaluator.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "reference_eval.h"
#include "tessera/core/error.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/onnx_builder.h"
#include <fstream>

namespace tessera::lirpa::testing {
namespace {

const std::string kData = std::string(TESSERA_SHARED_DATA) + "/vnncomp2021/";

void expect_forward_matches(const std::string& path, int samples) {
  SCOPED_TRACE(path);
  Graph g = load_onnx(path);
  at::Tensor x = at::rand({samples, g.input_size()}, at::kDouble) * 2 - 1;
  at::Tensor y = g.forward(x, at::kDouble);
  ASSERT_EQ(y.size(1), g.output_size());
  for (int s = 0; s < samples; ++s) {
    at::Tensor xs = x[s].contiguous();
    std::vector<double> in(xs.data_ptr<double>(), xs.data_ptr<double>() + xs.numel());
    std::vector<double> ref = reference_eval(path, in);
    ASSERT_EQ(static_cast<int64_t>(ref.size()), g.output_size());
    for (size_t i = 0; i < ref.size(); ++i)
      EXPECT_NEAR(y[s][i].item<double>(), ref[i], 1e-10 * (1 + std::abs(ref[i]))) << "sample " << s << " output " << i;
  }
}

TEST(LirpaModels, AllAcasXuNetworksMatchReference) {
  int count = 0;
  for (const auto& e : std::filesystem::directory_iterator(kData + "acasxu")) {
    if (e.path().extension() != ".onnx") continue;
    expect_forward_matches(e.path().string(), 2);
    ++count;
  }
  EXPECT_EQ(count, 45);
}

TEST(LirpaModels, TestNetworksMatchReference) {
  for (const char* n : {"test_nano", "test_tiny", "test_small", "test_sat", "test_unsat"})
    expect_forward_matches(kData + "test/" + n + ".onnx", 3);
}

TEST(LirpaModels, MnistAndCifarMatchReference) {
  expect_forward_matches(kData + "mnistfc/mnist-net_256x2.onnx", 3);
  expect_forward_matches(kData + "oval21/cifar_wide_kw.onnx", 2);
}

TEST(LirpaModels, UnsupportedOperatorNamesOpNodeAndList) {
  OnnxBuilder b("x", {1, 3});
  b.set_output(b.node("Einsum", {b.input()}));
  try {
    load_onnx_bytes(b.bytes(), "soft.onnx");
    FAIL() << "no error";
  } catch (const Unsupported& e) {
    std::string m = e.message();
    EXPECT_NE(m.find("'Einsum'"), std::string::npos) << m;
    EXPECT_NE(m.find("Einsum_0"), std::string::npos) << m;
    EXPECT_NE(m.find("Gemm"), std::string::npos) << m;
    EXPECT_NE(m.find("Relu"), std::string::npos) << m;
  }
}

TEST(LirpaModels, GarbageFileIsParseError) {
  EXPECT_THROW(load_onnx_bytes("this is not a protobuf", "bad.onnx"), ParseError);
}

// Shape arithmetic (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) folds into constants.
TEST(LirpaModels, ShapeArithmeticIsFolded) {
  OnnxBuilder b("x", {1, 2, 3});
  auto shape = b.node("Shape", {b.input()});
  auto n0 = b.node("Gather", {shape, b.constant("zero", at::zeros({}, at::kLong))}, {OnnxAttr::integer("axis", 0)});
  auto u = b.node("Unsqueeze", {n0, b.constant("axes", at::zeros({1}, at::kLong))});
  auto cat = b.node("Concat", {u, b.constant("minus1", at::full({1}, -1, at::kLong))}, {OnnxAttr::integer("axis", 0)});
  auto r = b.node("Reshape", {b.input(), cat});
  b.set_output(b.node("Relu", {r}));
  Graph g = load_onnx_bytes(b.bytes());
  EXPECT_EQ(g.output_shape(), std::vector<int64_t>({1, 6}));
  at::Tensor x = at::randn({4, 6}, at::kDouble);
  EXPECT_TRUE(at::allclose(g.forward(x, at::kDouble), x.clamp_min(0)));
}

// A constant that an operator only derives its own parameter from (Gemm's weight, transposed
// and scaled; an Add's shift) is not kept as well: a network's parameters are held once. A
// MatMul reads its constant as it is, under the initializer's name.
TEST(LirpaModels, ParametersAreHeldOnce) {
  OnnxBuilder b("x", {1, 3});
  auto h = b.node("Gemm", {b.input(), b.constant("w0", at::randn({4, 3}, at::kDouble)),
                          b.constant("b0", at::randn({4}, at::kDouble))}, {OnnxAttr::integer("transB", 1)});
  auto z = b.node("MatMul", {b.node("Relu", {h}), b.constant("w1", at::randn({4, 2}, at::kDouble))});
  b.set_output(b.node("Add", {z, b.constant("b1", at::randn({2}, at::kDouble))}));
  Graph g = load_onnx_bytes(b.bytes());
  int64_t held = 0;
  for (const std::string& key : g.params().keys()) {
    int64_t n = 1;
    for (int64_t d : g.params().shape(key)) n *= d;
    held += n;
  }
  EXPECT_EQ(held, 4 * 3 + 4 + 4 * 2 + 2);  // each weight and bias once
  EXPECT_TRUE(g.params().contains("w1"));
  EXPECT_FALSE(g.params().contains("w0"));
  at::Tensor x = at::randn({5, 3}, at::kDouble);
  EXPECT_EQ(g.forward(x, at::kDouble).sizes(), (std::vector<int64_t>{5, 2}));
}

TEST(LirpaModels, NnetLoaderReadsLayersAndNormalisation) {
  std::string path = ::testing::TempDir() + "tiny.nnet";
  {
    std::ofstream f(path);
    // 2 layers: 2 inputs -> 2 hidden -> 1 output
    f << "// tiny\n2,2,1,2,\n2,2,1,\n0,\n-1,-1,\n1,1,\n0.5,0.5,1.0,\n2.0,2.0,3.0,\n"
      << "1.0,0.0,\n0.0,-1.0,\n0.0,\n0.5,\n1.0,1.0,\n0.25,\n";
  }
  Graph raw = load_nnet(path);
  // h = relu([x1, -x2 + 0.5]); y = h1 + h2 + 0.25; at x = (1, -1): h = (1, 1.5), y = 2.75
  at::Tensor x = at::tensor({1.0, -1.0}, at::kDouble).reshape({1, 2});
  EXPECT_NEAR(raw.forward(x, at::kDouble).item<double>(), 2.75, 1e-12);
  Graph norm = load_nnet(path, true);
  // x_n = (x - 0.5) / 2 = (0.25, -0.75); h = (0.25, 1.25); y_n = 1.75; y = 1.75 * 3 + 1 = 6.25
  EXPECT_NEAR(norm.forward(x, at::kDouble).item<double>(), 6.25, 1e-12);
  std::ofstream(path) << "2,2,1\n2,2\n";
  EXPECT_THROW(load_nnet(path), ParseError);
}

}  // namespace
}  // namespace tessera::lirpa::testing
