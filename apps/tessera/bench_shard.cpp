// `tessera bench shard`: FSDP and tensor parallelism on wide random MLPs (n -> h x L -> 10,
// n = --inputs, 784 by default, 3072 for CIFAR-sized inputs),
// or with --cnn on random CNNs (3x32x32 -> L x (conv 3x3 stride 2, h channels, ReLU) -> 10).
// For each width, depth, method and shard mode (none, fsdp, fsdp+state, tp), one JSON line with every rank's baseline bytes (network built,
// before bounding) and peak bytes from the MemoryLedger, the seconds, and the largest bound
// difference against the unsharded run of the same job (which is the single-process
// computation: with --shard none every rank holds the whole network and computes alone).

#include <ATen/ATen.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "allocator_tuning.h"
#include "cli_checks.h"
#include "commands.h"
#include "json_values.h"
#include "model_loading.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/mlp_builder.h"
#include "tessera/lirpa/sharded_param_store.h"

namespace tessera::app {
namespace {

struct BenchShardOptions {
  std::vector<int64_t> widths{1024, 4096, 16384};
  std::vector<int> depths{1, 2, 3};
  std::vector<std::string> methods{"ibp", "crown", "alpha-crown"};
  std::vector<std::string> modes{"none", "fsdp"};  // none runs first (the reference) unless --no-reference
  int64_t max_params = 40'000'000;  // skip larger networks (time and memory of this machine)
  int64_t seed = 1;
  double eps = 0.002;               // half-width of the input box
  int iterations = 5;               // alpha-CROWN steps
  bool reference = true;            // run `none` first and report differences against it
  bool cnn = false;                 // widths are conv channels, depths conv layers
  int64_t inputs = 784;             // MLP inputs
};

/// Inputs of the benchmark's networks.
int64_t input_size(const BenchShardOptions& o) { return o.cnn ? 3 * 32 * 32 : o.inputs; }

/// Parameters of the MLP or CNN of width h and depth L.
int64_t parameter_count(const BenchShardOptions& o, int64_t h, int depth) {
  if (!o.cnn) return o.inputs * h + (depth - 1) * h * h + 10 * h + depth * h + 10;
  int64_t side = 32, n = 3 * 9 * h + h;  // first conv
  for (int k = 0; k < depth; ++k) side = (side - 1) / 2 + 1;
  n += (depth - 1) * (h * 9 * h + h);
  return n + 10 * h * side * side + 10;
}

/// The store of `mode`: sharded over the world's ranks (fsdp, fsdp+state, tp), else local.
std::shared_ptr<lirpa::ParamStore> store_for(const std::string& mode) {
  const lirpa::ShardMode shard = lirpa::parse_shard_mode(mode);
  if (!splits_parameters(shard, *dist::world())) return std::make_shared<lirpa::LocalParamStore>();
  return std::make_shared<lirpa::ShardedParamStore>(dist::world(), shard);
}

/// Every rank makes the same network (same seed); sharded, each keeps its blocks only.
lirpa::Graph make_network(const BenchShardOptions& o, int64_t h, int depth, const std::string& mode) {
  const int64_t seed = o.seed;
  if (o.cnn) {  // small weights: made whole, then sharded
    lirpa::Graph g = lirpa::build_relu_cnn({3, 32, 32}, std::vector<int64_t>(depth, h),
                                           std::vector<int64_t>(depth, 2), 10, seed);
    const lirpa::ShardMode shard = lirpa::parse_shard_mode(mode);
    if (splits_parameters(shard, *dist::world())) lirpa::shard_parameters(g, dist::world(), shard);
    return g;
  }
  std::vector<int64_t> sizes{o.inputs};
  for (int i = 0; i < depth; ++i) sizes.push_back(h);
  sizes.push_back(10);
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  auto layer = [&](int, int64_t n_in, int64_t n_out) {
    // W ~ N(0, 2 / n_in) (He), b ~ N(0, 0.01)
    return std::pair{at::normal(0.0, std::sqrt(2.0 / n_in), {n_out, n_in}, gen, at::kDouble),
                     at::normal(0.0, 0.1, {n_out}, gen, at::kDouble)};
  };
  return lirpa::build_relu_mlp(sizes, layer, store_for(mode));
}

std::vector<int64_t> per_rank(int64_t mine) { return app::per_rank(*dist::world(), mine); }

struct Run {
  lirpa::BoundsResult bounds;
  core::PhaseRecord memory;
  double seconds = 0;
};

Run run_one(const lirpa::Graph& net, const at::Tensor& lo, const at::Tensor& hi, const lirpa::BoundOptions& opt) {
  Run r;
  core::MemoryPhase phase("bounds");
  auto t0 = std::chrono::steady_clock::now();
  r.bounds = lirpa::compute_bounds(net, lo, hi, opt);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.memory = phase.finish();
  return r;
}

double max_difference(const lirpa::BoundsResult& a, const lirpa::BoundsResult& b) {
  return std::max((a.lower - b.lower).abs().max().item<double>(), (a.upper - b.upper).abs().max().item<double>());
}

/// mean(u - l) / mean(u_ref - l_ref): how much looser (> 1) the bounds are than the reference.
double width_ratio(const lirpa::BoundsResult& a, const lirpa::BoundsResult& ref) {
  return (a.upper - a.lower).mean().item<double>() / (ref.upper - ref.lower).mean().item<double>();
}

void bench_network(const BenchShardOptions& o, int64_t h, int depth) {
  const int64_t params = parameter_count(o, h, depth);
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(o.seed + 1000);
  at::Tensor centre = at::rand({input_size(o)}, gen, at::kDouble);
  at::Tensor lo = centre - o.eps, hi = centre + o.eps;
  std::map<std::string, lirpa::BoundsResult> reference;  // per method, from --shard none
  std::vector<std::string> modes;
  if (o.reference) modes.push_back("none");
  for (const auto& m : o.modes)
    if (m != "none" || !o.reference) modes.push_back(m);
  for (const auto& mode : modes) {
    lirpa::Graph net = make_network(o, h, depth, mode);
    for (const auto& name : o.methods) {
      lirpa::BoundOptions opt;
      opt.method = lirpa::parse_method(name);
      opt.alpha.iterations = o.iterations;
      if (mode == "fsdp+state") opt.shard_rows = dist::world();
      dist::world()->barrier();
      Run r = run_one(net, lo, hi, opt);
      if (mode == "none") reference[name] = r.bounds;
      nlohmann::json line = {{"bench", "shard"}, {"network", o.cnn ? "cnn" : "mlp"}, {"width", h},
                             {"hidden_layers", depth}, {"method", name}, {"shard", mode},
                             {"ranks", dist::world()->size()}, {"weight_bytes", params * 8},
                             {"baseline_bytes", per_rank(r.memory.baseline_bytes)},
                             {"peak_bytes", per_rank(r.memory.peak_bytes)}, {"seconds", r.seconds},
                             {"alpha_iterations", r.bounds.iterations},
                             {"weight_block_bytes", lirpa::weight_block_bytes()},
                             {"lower", to_vector(r.bounds.lower)}, {"upper", to_vector(r.bounds.upper)}};
      if (!o.cnn) line["largest_weight_bytes"] = std::max(o.inputs * h, (depth > 1 ? h * h : 0)) * 8;
      if (reference.count(name)) {
        line["max_bound_difference"] = max_difference(r.bounds, reference[name]);
        line["bound_scale"] = reference[name].upper.abs().max().item<double>();
        line["width_ratio"] = width_ratio(r.bounds, reference[name]);
      }
      if (dist::world()->rank() == 0) std::cout << line.dump() << std::endl;
    }
  }
}

int run_bench_shard(const BenchShardOptions& o) {
  keep_freed_memory();
  for (int64_t h : o.widths)
    for (int depth : o.depths) {
      if (parameter_count(o, h, depth) > o.max_params) {
        if (dist::world()->rank() == 0)
          std::cout << nlohmann::json{{"bench", "shard"}, {"width", h}, {"hidden_layers", depth},
                                      {"skipped", "more than --max-params parameters"}}.dump() << std::endl;
        continue;
      }
      bench_network(o, h, depth);
    }
  return 0;
}

}  // namespace

void add_bench_shard(CLI::App& bench, CommandBody& body) {
  auto o = std::make_shared<BenchShardOptions>();
  CLI::App* cmd = bench.add_subcommand("shard", "FSDP and TP memory and bounds on wide random MLPs (run under mpirun)");
  cmd->add_option("--widths", o->widths, "hidden widths h")->delimiter(',');
  cmd->add_option("--depths", o->depths, "numbers of hidden layers")->delimiter(',');
  cmd->add_option("--methods", o->methods, "ibp, crown, alpha-crown")->delimiter(',');
  cmd->add_option("--modes", o->modes, "none, fsdp, fsdp+state (fsdp and the rows of each backward pass split), "
                                       "tp (tensor-parallel products); none runs first as the reference unless --no-reference")
      ->delimiter(',')->check(CLI::IsMember({"none", "fsdp", "fsdp+state", "tp"}));
  cmd->add_flag("--cnn", o->cnn, "random CNNs 3x32x32 -> depth x (conv 3x3 stride 2 pad 1, width channels, "
                                 "ReLU) -> Flatten -> Linear 10 instead of MLPs");
  cmd->add_option("--inputs", o->inputs, "inputs of the MLPs (784; 3072 for CIFAR-sized)")->check(kPositive);
  cmd->add_option("--max-params", o->max_params, "skip networks with more parameters");
  cmd->add_option("--seed", o->seed, "seed of the weights and the input box");
  cmd->add_option("--eps", o->eps, "half-width of the input box")->check(kPositive);
  cmd->add_option("--iterations", o->iterations, "alpha-CROWN steps")->check(kNonNegative);
  cmd->add_flag("--reference,!--no-reference", o->reference,
                "run the unsharded network first and report differences against it (default); "
                "--no-reference runs only --modes (e.g. under a --memory-cap the whole network exceeds)");
  cmd->callback([o, &body] { body = [o] { return run_bench_shard(*o); }; });
}

}  // namespace tessera::app
