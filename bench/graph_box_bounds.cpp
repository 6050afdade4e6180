// Input boxes bounded on the graph engine as input splitting bounds them (bound_graph_domains,
// one domain per box, no split, the padding rows' bounds intersected: box_bounds.h): random
// sub-boxes of a property's box, each dimension narrowed 2^-s times (s uniform in 0..depth).
//
//   build/bench_graph_box_bounds NET.onnx PROP.vnnlib [--boxes B] [--depth S] [--repeats R] [--seed X]
//
// One JSON line per repeat: seconds, boxes per second, the mean score (max over the rows of
// the lower bound of c y - rhs: a box is verified when > 0) and the verified boxes.

#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "lirpa/bab/graph_bab.h"
#include "lirpa/bab/box_bounds.h"
#include "tessera/core/threads.h"
#include "tessera/lirpa/graph.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/vnnlib.h"

using namespace tessera::lirpa;
namespace lpd = tessera::lirpa::detail;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s NET.onnx PROP.vnnlib [--boxes B] [--depth S] [--repeats R] [--seed X]\n", argv[0]);
    return 2;
  }
  int64_t boxes = 1024, depth = 6, repeats = 3, seed = 1;
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    int64_t v = std::atoll(argv[i + 1]);
    if (k == "--boxes") boxes = v;
    else if (k == "--depth") depth = v;
    else if (k == "--repeats") repeats = v;
    else if (k == "--seed") seed = v;
    else return std::fprintf(stderr, "unknown option %s\n", k.c_str()), 2;
  }
  tessera::core::setup_threads(0);
  at::NoGradGuard no_grad;
  Graph graph = load_onnx(argv[1]);
  Property prop = load_vnnlib(argv[2]);
  check_property_sizes(prop, graph.input_size(), graph.output_size(), argv[2]);
  const PropertyCase& pc = prop.cases.at(0);
  at::Tensor c = pc.disjuncts.at(0).c, rhs = pc.disjuncts.at(0).rhs;
  std::vector<lpd::GraphRelu> relus = lpd::graph_relus(graph);
  at::manual_seed(seed);
  const int64_t n = graph.input_size();
  for (int64_t r = 0; r < repeats; ++r) {
    // box b, dimension i: width (u - l) 2^-s, s uniform in 0..depth, at a uniform position
    at::Tensor width = (pc.upper - pc.lower) * at::pow(2.0, -at::randint(0, depth + 1, {boxes, n}, at::kDouble));
    at::Tensor xl = pc.lower + (pc.upper - pc.lower - width) * at::rand({boxes, n}, at::kDouble), xu = xl + width;
    auto t0 = std::chrono::steady_clock::now();
    lpd::GraphBounded g = lpd::bound_box_domains(graph, relus, xl, xu, c, rhs);
    const double t = seconds_since(t0);
    at::Tensor score = std::get<0>(g.lb.max(1));
    std::printf(
        "{\"boxes\": %lld, \"depth\": %lld, \"seconds\": %.4f, \"boxes_per_second\": %.1f, \"mean_score\": %.6g, "
        "\"verified\": %lld}\n",
        static_cast<long long>(boxes), static_cast<long long>(depth), t, static_cast<double>(boxes) / t,
        score.mean().item<double>(), static_cast<long long>((score > 0).sum().item<int64_t>()));
    std::fflush(stdout);
  }
  return 0;
}
