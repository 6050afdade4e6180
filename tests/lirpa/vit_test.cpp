// The VNN-COMP 2023 ViT (pgd_2_3_16: patch Conv, class token, two softmax attention
// blocks, BatchNorm, ReLU MLPs) loads, and its IBP and CROWN bounds of the specification
// rows contain the outputs of sampled points of the property's box. CROWN's lower bounds of
// the specification rows keep the tightness reached (bench/RESULTS-vit.md): with
// intersect_ibp, at least auto_LiRPA's CROWN reference on every row of the properties where
// that holds, and per property a floor under the sum of the rows (plain CROWN too on 1159).
// Skipped when the shared data folder is absent.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

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

// auto_LiRPA's CROWN lower bounds of the rows of `property` (../lirpa_reference_vit).
std::vector<double> auto_lirpa_crown(const std::string& property) {
  std::ifstream f(std::string(TESSERA_SHARED_DATA) + "/lirpa_reference_vit/pgd_2_3_16__pgd_2_3_16_" + property + ".json");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (size_t at = text.find("NaN"); at != std::string::npos; at = text.find("NaN", at)) text.replace(at, 3, "null");  // Python's json
  return nlohmann::json::parse(text)["methods"]["CROWN"]["lower"].get<std::vector<double>>();
}

at::Tensor crown_spec_lower(const std::string& property, bool intersect_ibp) {
  Graph g = load_onnx(kVit + "pgd_2_3_16.onnx");
  Property p = load_vnnlib(kVit + "pgd_2_3_16_" + property + ".vnnlib");
  const PropertyCase& box = p.cases.at(0);
  BoundOptions o;
  o.method = Method::Crown;
  o.intersect_ibp = intersect_ibp;
  return compute_bounds(g, box.lower, box.upper, o, box.spec_matrix()).lower;
}

TEST(LirpaVit, CrownKeepsItsTightnessOnTheReferenceProperties) {
  if (!std::filesystem::exists(kVit + "pgd_2_3_16.onnx")) GTEST_SKIP() << "no shared data at " << kVit;
  struct Case {
    std::string property;
    double floor_sum;         // sum of the rows' lower bounds with intersect_ibp reached (2026-12-02)
    bool every_row_at_least;  // every row >= auto_LiRPA's CROWN (within 1e-6 relative)
  };
  for (const Case& c : {Case{"1159", 14.8599, true}, Case{"3347", 3.1243, false}, Case{"4021", 10.6940, true},
                        Case{"7308", 9.9372, false}, Case{"9907", -4.0509, false}}) {
    at::Tensor lb = crown_spec_lower(c.property, true);
    EXPECT_GE(lb.sum().item<double>(), c.floor_sum - 1e-4) << c.property;
    if (!c.every_row_at_least) continue;
    std::vector<double> ref = auto_lirpa_crown(c.property);
    ASSERT_EQ(lb.numel(), static_cast<int64_t>(ref.size()));
    for (size_t i = 0; i < ref.size(); ++i)
      EXPECT_GE(lb[i].item<double>(), ref[i] - 1e-6 * std::abs(ref[i])) << c.property << " row " << i;
  }
  // plain CROWN (auto_LiRPA's intermediate bounds): sum 13.4975 on 1159
  EXPECT_GE(crown_spec_lower("1159", false).sum().item<double>(), 13.4975 - 1e-4);
}

}  // namespace
}  // namespace tessera::lirpa
