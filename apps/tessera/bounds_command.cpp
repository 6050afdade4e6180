// `tessera bounds MODEL PROPERTY --method ibp|crown|alpha-crown [--spec] [--json]
// [--shard none|fsdp|tp]`: bounds of the raw outputs (or of the property's specification rows)
// over each input box. Under mpirun every rank computes the same bounds; with `--shard fsdp`
// each keeps 1/P of the weights, gathered on use; with `--shard tp` each multiplies by its
// rows of every weight matrix (tensor parallelism); with `--shard tp-heads` each bounds its
// attention heads and MLP columns (IBP, CROWN). Rank 0 prints, with every rank's memory
// figures in --json.

#include <ATen/ATen.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "allocator_tuning.h"
#include "cli_checks.h"
#include "commands.h"
#include "json_values.h"
#include "model_loading.h"
#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/sharded_param_store.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::app {
namespace {

struct BoundsOptions {
  std::string model, property, method = "crown", shard = "none";
  bool spec = false, json = false, float32 = false, intersect_ibp = false, alpha_final = false;
  int iterations = 20;
};

int run_bounds(const BoundsOptions& o) {
  keep_freed_memory();
  const lirpa::ShardMode shard = lirpa::parse_shard_mode(o.shard);
  auto comm = dist::world();
  // one rank (no MPI, or P = 1): sharding would only copy the weights, so it acts like none
  const lirpa::Graph g = load_model(o.model, comm, shard);
  lirpa::Property p = load_property(o.property, *comm);
  lirpa::check_property_sizes(p, g.input_size(), g.output_size(), "'" + o.property + "' on '" + o.model + "'");
  lirpa::BoundOptions opt;
  opt.method = lirpa::parse_method(o.method);
  opt.dtype = o.float32 ? at::kFloat : at::kDouble;
  opt.intersect_ibp = o.intersect_ibp;
  opt.alpha.iterations = o.iterations;
  opt.alpha.intermediate = !o.alpha_final;
  if (shard == lirpa::ShardMode::FsdpState) opt.shard_rows = comm;  // rows of each backward pass split too
  nlohmann::json all = nlohmann::json::array();
  for (const auto& c : p.cases) {
    at::Tensor spec = o.spec ? c.spec_matrix() : at::Tensor();
    core::MemoryPhase phase("bounds");  // baseline: model (or its shard) loaded, before bounding
    auto t0 = std::chrono::steady_clock::now();
    lirpa::BoundsResult r = lirpa::compute_bounds(g, c.lower, c.upper, opt, spec);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    core::PhaseRecord mem = phase.finish();
    all.push_back({{"method", lirpa::method_name(opt.method)}, {"lower", to_vector(r.lower)},
                   {"upper", to_vector(r.upper)}, {"seconds", secs}, {"shard", lirpa::shard_mode_name(shard)},
                   {"ranks", comm->size()}, {"baseline_bytes", per_rank(*comm, mem.baseline_bytes)},
                   {"peak_bytes", per_rank(*comm, mem.peak_bytes)}});
  }
  if (comm->rank() != 0) return 0;
  if (o.json) {
    std::cout << (all.size() == 1 ? all[0] : all).dump() << std::endl;
    return 0;
  }
  for (size_t k = 0; k < all.size(); ++k) {
    if (all.size() > 1) std::cout << "input box " << k << ":\n";
    auto l = all[k]["lower"].get<std::vector<double>>(), u = all[k]["upper"].get<std::vector<double>>();
    for (size_t i = 0; i < l.size(); ++i)
      std::cout << "  " << (o.spec ? "spec " : "y_") << i << "  [" << l[i] << ", " << u[i] << "]\n";
    std::cout << "  (" << all[k]["method"].get<std::string>() << ", " << all[k]["seconds"].get<double>() << " s)\n";
  }
  return 0;
}

}  // namespace

void add_bounds_command(CLI::App& app, CommandBody& body) {
  auto o = std::make_shared<BoundsOptions>();
  CLI::App* cmd = app.add_subcommand("bounds", "bound a network's outputs over a VNN-LIB input region");
  cmd->add_option("model", o->model, "network (.onnx or .nnet)")->required()->check(CLI::ExistingFile);
  cmd->add_option("property", o->property, "VNN-LIB property")->required()->check(CLI::ExistingFile);
  cmd->add_option("--method", o->method, "ibp, crown or alpha-crown")
      ->check(CLI::IsMember({"ibp", "crown", "alpha-crown"}));
  cmd->add_flag("--spec", o->spec, "bound the property's specification rows instead of the raw outputs");
  cmd->add_flag("--json", o->json, "print JSON (a list for several input boxes)");
  cmd->add_flag("--float32", o->float32, "compute in float32 (default float64)");
  cmd->add_flag("--intersect-ibp", o->intersect_ibp,
                "intersect every intermediate CROWN bound with the interval bound before it (tighter than "
                "auto_LiRPA's CROWN, as verify does)");
  cmd->add_option("--iterations", o->iterations, "alpha-CROWN iterations")->check(kNonNegative);
  cmd->add_flag("--alpha-final", o->alpha_final,
                "alpha-crown: optimise only the final rows' slopes, the intermediate bounds fixed to CROWN's (one "
                "backward pass per step)");
  cmd->add_option("--shard", o->shard, "under mpirun: none (every rank holds the whole network), fsdp "
                                       "(each rank keeps 1/P of every weight, gathered on use), fsdp+state (fsdp, and the "
                                       "rows of every CROWN backward pass with their A matrices and alpha slopes "
                                       "split across ranks), tp (tensor "
                                       "parallelism: each rank multiplies by its rows of every weight matrix) or "
                                       "tp-heads (tensor parallelism by heads: each rank keeps and bounds its attention "
                                       "heads and MLP columns; IBP and CROWN)");
  cmd->callback([o, &body] { body = [o] { return run_bounds(*o); }; });
}

}  // namespace tessera::app
