// Input boxes bounded by the two engines: the chain engine's bound_input_boxes (forward linear
// bounds, backward CROWN of the unstable neurons per box, padding groups) and the graph
// engine's bound_graph_domains (one domain per box, no splits) — the step input splitting
// needs before it can move onto the graph engine. Random sub-boxes of a property's box, each
// dimension narrowed 2^-s times (s uniform in 0..depth), both engines on the same boxes.
//
//   build/bench_graph_box_bounds NET.onnx PROP.vnnlib [--boxes B] [--depth S] [--repeats R] [--seed X]
//
// One JSON line per repeat: seconds of each engine, the mean score (max over the rows of the
// lower bound of c y - rhs: a box is verified when > 0), verified boxes, and the boxes where
// the graph's score is below / above the chain's by more than 1e-9.

#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "lirpa/bab/graph_bab.h"
#include "lirpa/bab/input_bounds.h"
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
  std::string why;
  auto net = lpd::extract_relu_net(graph, &why);
  if (!net) return std::fprintf(stderr, "not a chain: %s\n", why.c_str()), 2;
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
    lpd::BoxBounds chain = lpd::bound_input_boxes(*net, xl, xu, c, rhs);
    const double t_chain = seconds_since(t0);
    lpd::GraphDomains d;
    d.xl = xl, d.xu = xu, d.root = at::arange(boxes, at::kLong);
    for (const auto& relu : relus) d.split.push_back(at::zeros({boxes, relu.size}, at::kChar));
    t0 = std::chrono::steady_clock::now();
    lpd::GraphBounded g = lpd::bound_graph_domains(graph, relus, d, c, rhs);
    const double t_graph = seconds_since(t0);
    at::Tensor sc = std::get<0>(chain.lb.max(1)), sg = std::get<0>(g.lb.max(1));
    std::printf(
        "{\"boxes\": %lld, \"depth\": %lld, \"chain_seconds\": %.4f, \"graph_seconds\": %.4f, \"chain_mean_score\": %.6g, "
        "\"graph_mean_score\": %.6g, \"chain_verified\": %lld, \"graph_verified\": %lld, \"graph_looser\": %lld, "
        "\"graph_tighter\": %lld}\n",
        static_cast<long long>(boxes), static_cast<long long>(depth), t_chain, t_graph, sc.mean().item<double>(),
        sg.mean().item<double>(), static_cast<long long>((sc > 0).sum().item<int64_t>()),
        static_cast<long long>((sg > 0).sum().item<int64_t>()), static_cast<long long>((sg < sc - 1e-9).sum().item<int64_t>()),
        static_cast<long long>((sg > sc + 1e-9).sum().item<int64_t>()));
    std::fflush(stdout);
  }
  return 0;
}
