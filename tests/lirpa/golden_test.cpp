// Golden bounds from auto_LiRPA (../shared/data/lirpa_reference, float64): IBP and CROWN
// to 1e-6 relative; alpha-CROWN never looser than our CROWN and at least as tight as the
// reference within kAlphaTolerance * (1 + |reference|) (0.5%; measured worst: 0.23% on
// mnist-net_256x2 prop_0, 0.19% on ACAS Xu 1_1 prop_4; tighter than auto_LiRPA elsewhere).

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::lirpa {
namespace {

constexpr double kRelative = 1e-6;
constexpr double kAlphaTolerance = 5e-3;

const std::string kData = TESSERA_SHARED_DATA;

std::vector<std::string> reference_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(kData + "/lirpa_reference"))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The benchmark path of a reference file; files of a benchmark's subfolders (e.g.
// "oval21/nets/x.onnx") are stored flat in the benchmark folder ("oval21/x.onnx").
std::string benchmark_file(const std::string& rel) {
  std::filesystem::path p = kData + "/vnncomp2021/" + rel;
  if (std::filesystem::exists(p)) return p.string();
  std::filesystem::path r(rel);
  return (kData + "/vnncomp2021/" + r.begin()->string() + "/" + r.filename().string());
}

class LirpaGolden : public ::testing::TestWithParam<std::string> {};

void expect_close(const at::Tensor& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = got[i].item<double>();
    EXPECT_LE(std::abs(g - want[i]), kRelative * std::abs(want[i]) + 1e-9) << what << " [" << i << "] " << g
                                                                            << " vs " << want[i];
  }
}

TEST_P(LirpaGolden, MatchesAutoLirpa) {
  std::ifstream f(GetParam());
  nlohmann::json ref = nlohmann::json::parse(f);
  Graph g = load_onnx(benchmark_file(ref["benchmark_paths"]["onnx"].get<std::string>()));
  Property p = load_vnnlib(benchmark_file(ref["benchmark_paths"]["vnnlib"].get<std::string>()));
  ASSERT_EQ(p.cases.size(), 1u);
  const auto& box = p.cases[0];
  auto samples_min = ref["samples"]["min"].get<std::vector<double>>();
  auto samples_max = ref["samples"]["max"].get<std::vector<double>>();
  BoundsResult crown;
  for (auto [key, method] : {std::pair{"IBP", Method::Ibp}, {"CROWN", Method::Crown}, {"alpha-CROWN", Method::AlphaCrown}}) {
    SCOPED_TRACE(key);
    BoundOptions o;
    o.method = method;
    BoundsResult r = compute_bounds(g, box.lower, box.upper, o);
    auto want_l = ref["methods"][key]["lower"].get<std::vector<double>>();
    auto want_u = ref["methods"][key]["upper"].get<std::vector<double>>();
    for (size_t i = 0; i < want_l.size(); ++i) {  // sound on the reference's samples
      EXPECT_LE(r.lower[i].item<double>(), samples_min[i] + 1e-9);
      EXPECT_GE(r.upper[i].item<double>(), samples_max[i] - 1e-9);
    }
    if (method != Method::AlphaCrown) {
      expect_close(r.lower, want_l, "lower");
      expect_close(r.upper, want_u, "upper");
      if (method == Method::Crown) crown = r;
      continue;
    }
    for (size_t i = 0; i < want_l.size(); ++i) {
      const double tol = kAlphaTolerance;
      EXPECT_GE(r.lower[i].item<double>(), want_l[i] - tol * (1 + std::abs(want_l[i]))) << i;
      EXPECT_LE(r.upper[i].item<double>(), want_u[i] + tol * (1 + std::abs(want_u[i]))) << i;
      EXPECT_GE(r.lower[i].item<double>(), crown.lower[i].item<double>() - 1e-9);
      EXPECT_LE(r.upper[i].item<double>(), crown.upper[i].item<double>() + 1e-9);
    }
  }
}

// CROWN with its intermediate bounds intersected with the interval bounds (`intersect_ibp`,
// what verify uses): sound on every reference's samples, never looser than plain CROWN (=
// auto_LiRPA's), and tighter somewhere (ACAS Xu: -266.6 against -410.8 on an output).
TEST(LirpaGoldenIntersected, SoundNeverLooserAndTighterSomewhere) {
  int tighter = 0;
  for (const std::string& file : reference_files()) {
    SCOPED_TRACE(file);
    std::ifstream f(file);
    nlohmann::json ref = nlohmann::json::parse(f);
    Graph g = load_onnx(benchmark_file(ref["benchmark_paths"]["onnx"].get<std::string>()));
    Property p = load_vnnlib(benchmark_file(ref["benchmark_paths"]["vnnlib"].get<std::string>()));
    auto samples_min = ref["samples"]["min"].get<std::vector<double>>();
    auto samples_max = ref["samples"]["max"].get<std::vector<double>>();
    BoundOptions o;
    o.method = Method::Crown;
    BoundsResult plain = compute_bounds(g, p.cases[0].lower, p.cases[0].upper, o);
    o.intersect_ibp = true;
    BoundsResult r = compute_bounds(g, p.cases[0].lower, p.cases[0].upper, o);
    for (size_t i = 0; i < samples_min.size(); ++i) {
      EXPECT_LE(r.lower[i].item<double>(), samples_min[i] + 1e-9) << i;
      EXPECT_GE(r.upper[i].item<double>(), samples_max[i] - 1e-9) << i;
    }
    EXPECT_TRUE((r.lower >= plain.lower - 1e-9).all().item<bool>());
    EXPECT_TRUE((r.upper <= plain.upper + 1e-9).all().item<bool>());
    tighter += (r.lower > plain.lower + 1e-6).any().item<bool>() ? 1 : 0;
  }
  EXPECT_GT(tighter, 0) << "the intersection never changed a bound";
}

INSTANTIATE_TEST_SUITE_P(Reference, LirpaGolden, ::testing::ValuesIn(reference_files()),
                         [](const auto& info) {
                           std::string s = std::filesystem::path(info.param).stem().string();
                           for (auto& c : s) if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

}  // namespace
}  // namespace tessera::lirpa
