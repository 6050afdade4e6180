// The VNN-COMP 2023 ViT (pgd_2_3_16: patch Conv, class token, two softmax attention
// blocks, BatchNorm, ReLU MLPs) loads, and its IBP and CROWN bounds of the specification
// rows contain the outputs of sampled points of the property's box. Skipped when the
// shared data folder is absent.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::lirpa {
namespace {

const std::string kVit = std::string(TESSERA_SHARED_DATA) + "/vnncomp2023/vit/";

TEST(LirpaVit, BoundsOfTheSharedVitContainSampledOutputs) {
  if (!std::filesystem::exists(kVit + "pgd_2_3_16.onnx")) GTEST_SKIP() << "no shared data at " << kVit;
  Graph g = load_onnx(kVit + "pgd_2_3_16.onnx");
  Property p = load_vnnlib(kVit + "pgd_2_3_16_1159.vnnlib");
  const PropertyCase& box = p.cases.at(0);
  at::Tensor c = box.spec_matrix();
  // samples: the box's corners are where attention saturates; half the points on them
  constexpr int64_t n = 1000;
  at::manual_seed(11);
  at::Tensor t = at::rand({n, box.lower.numel()}, at::kDouble);
  t.slice(0, 0, n / 2).round_();
  at::Tensor x = box.lower + (box.upper - box.lower) * t;
  std::vector<int64_t> shape{n};
  for (int64_t d : g.input_shape()) shape.push_back(d);
  at::Tensor y = g.forward(x.reshape(shape), at::kDouble).reshape({n, -1});
  at::Tensor cy = at::matmul(y, c.t());  // [n, K]
  for (Method m : {Method::Ibp, Method::Crown}) {
    BoundOptions o;
    o.method = m;
    BoundsResult r = compute_bounds(g, box.lower, box.upper, o, c);
    ASSERT_FALSE(r.lower.isnan().any().item<bool>()) << method_name(m);
    ASSERT_FALSE(r.upper.isnan().any().item<bool>()) << method_name(m);
    EXPECT_TRUE((cy >= r.lower.unsqueeze(0) - 1e-9).all().item<bool>())
        << method_name(m) << ": a sample below its lower bound by " << (r.lower.unsqueeze(0) - cy).max().item<double>();
    EXPECT_TRUE((cy <= r.upper.unsqueeze(0) + 1e-9).all().item<bool>())
        << method_name(m) << ": a sample above its upper bound by " << (cy - r.upper.unsqueeze(0)).max().item<double>();
  }
}

}  // namespace
}  // namespace tessera::lirpa
