// `tessera bench bounds`: times IBP, CROWN and alpha-CROWN on the auto_LiRPA reference
// instances and prints one JSON line per instance and method, with auto_LiRPA's recorded
// seconds (measured on another machine) for comparison.

#include <ATen/ATen.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "allocator_tuning.h"
#include "cli_checks.h"
#include "commands.h"
#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::app {
namespace {

struct BenchBoundsOptions {
  std::string reference_dir = "../shared/data/lirpa_reference";
  std::string data_dir = "../shared/data/vnncomp2021";
  int repeat = 3;
  std::string only;  // run only the instances whose file name contains this
};

double cpu_now() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/// Best wall-clock and best process CPU seconds of `repeat` runs (CPU seconds are less
/// disturbed by other processes on a shared machine; equal to wall time for one thread).
std::pair<double, double> time_best(const std::function<void()>& f, int repeat) {
  double best = 1e30, best_cpu = 1e30;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    double c0 = cpu_now();
    f();
    best_cpu = std::min(best_cpu, cpu_now() - c0);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return {best, best_cpu};
}

// Files of a benchmark's subfolders ("oval21/nets/x.onnx") are stored flat ("oval21/x.onnx").
std::string benchmark_file(const std::string& dir, const std::string& rel) {
  std::filesystem::path p = dir + "/" + rel;
  if (std::filesystem::exists(p)) return p.string();
  std::filesystem::path r(rel);
  return dir + "/" + r.begin()->string() + "/" + r.filename().string();
}

// max_i of how much looser our bounds are than the reference, relative to 1 + |reference|
// (negative: tighter everywhere).
double looseness(const lirpa::BoundsResult& r, const nlohmann::json& ref) {
  auto lo = ref["lower"].get<std::vector<double>>(), hi = ref["upper"].get<std::vector<double>>();
  double worst = -INFINITY;
  for (size_t i = 0; i < lo.size(); ++i) {
    worst = std::max(worst, (lo[i] - r.lower[i].item<double>()) / (1 + std::abs(lo[i])));  // our lower below theirs
    worst = std::max(worst, (r.upper[i].item<double>() - hi[i]) / (1 + std::abs(hi[i])));  // our upper above theirs
  }
  return worst;
}

int run_bench_bounds(const BenchBoundsOptions& o) {
  keep_freed_memory();
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(o.reference_dir))
    if (e.path().extension() == ".json" && e.path().filename().string().find(o.only) != std::string::npos)
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::ifstream f(file);
    auto ref = nlohmann::json::parse(f);
    lirpa::Graph g = lirpa::load_onnx(benchmark_file(o.data_dir, ref["benchmark_paths"]["onnx"].get<std::string>()));
    lirpa::Property p = lirpa::load_vnnlib(benchmark_file(o.data_dir, ref["benchmark_paths"]["vnnlib"].get<std::string>()));
    for (auto [key, method] : {std::pair{"IBP", lirpa::Method::Ibp}, {"CROWN", lirpa::Method::Crown},
                               {"alpha-CROWN", lirpa::Method::AlphaCrown}}) {
      lirpa::BoundOptions opt;
      opt.method = method;
      lirpa::BoundsResult r = lirpa::compute_bounds(g, p.cases[0].lower, p.cases[0].upper, opt);  // warm-up
      auto [secs, cpu] = time_best([&] { lirpa::compute_bounds(g, p.cases[0].lower, p.cases[0].upper, opt); }, o.repeat);
      double ref_secs = ref["methods"][key]["seconds"].get<double>();
      nlohmann::json line = {{"bench", "bounds"}, {"instance", std::filesystem::path(file).stem().string()},
                             {"method", lirpa::method_name(method)}, {"seconds", secs}, {"cpu_seconds", cpu},
                             {"auto_lirpa_seconds", ref_secs}, {"speedup", ref_secs / secs},
                             {"looser_than_auto_lirpa", looseness(r, ref["methods"][key])}};
      std::cout << line.dump() << std::endl;
    }
  }
  return 0;
}

}  // namespace

void add_bench_bounds(CLI::App& bench, CommandBody& body) {
  auto o = std::make_shared<BenchBoundsOptions>();
  CLI::App* cmd = bench.add_subcommand("bounds", "time IBP, CROWN, alpha-CROWN on the auto_LiRPA reference instances");
  cmd->add_option("--reference-dir", o->reference_dir, "folder of auto_LiRPA reference JSON files");
  cmd->add_option("--data-dir", o->data_dir, "folder of the VNN-COMP 2021 benchmarks");
  cmd->add_option("--only", o->only, "run only the instances whose file name contains this text");
  cmd->add_option("--repeat", o->repeat, "timed runs per method (best is reported)")->check(kPositive);
  cmd->callback([o, &body] { body = [o] { return run_bench_bounds(*o); }; });
}

}  // namespace tessera::app
