// `tessera verify MODEL PROPERTY [--timeout S] [--results FILE] [--config FILE.yaml] [--quiet]`:
// decide a VNN-LIB property. The last line of standard output is the verdict (sat, unsat,
// timeout or unknown); progress goes to standard error. Exit code 0 for every verdict.

#include <ATen/ATen.h>

#include <cstdio>
#include <iostream>

#include "commands.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/verify.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::app {
namespace {

struct VerifyCli {
  std::string model, property, results, config;
  double timeout = -1;
  bool quiet = false;
};

void print_progress(const lirpa::Progress& p) {
  if (p.domains > 0 || p.visited > 0)
    std::fprintf(stderr, "[%7.1f s] %s: %lld domains left, %lld visited, lower bound %.6g\n", p.elapsed,
                 p.phase.c_str(), static_cast<long long>(p.domains), static_cast<long long>(p.visited), p.lower);
  else
    std::fprintf(stderr, "[%7.1f s] %s\n", p.elapsed, p.phase.c_str());
}

int run_verify(const VerifyCli& o) {
  lirpa::VerifyOptions opt = o.config.empty() ? lirpa::VerifyOptions{} : lirpa::load_verify_config(o.config);
  if (o.timeout > 0) opt.timeout = o.timeout;  // the flag overrides the file
  bool nnet = o.model.size() > 5 && o.model.substr(o.model.size() - 5) == ".nnet";
  lirpa::Graph g = nnet ? lirpa::load_nnet(o.model) : lirpa::load_onnx(o.model);
  lirpa::Property p = lirpa::load_vnnlib(o.property);
  lirpa::check_property_sizes(p, g.input_size(), g.output_size(), "'" + o.property + "' on '" + o.model + "'");
  lirpa::ProgressFn progress;
  if (!o.quiet) progress = print_progress;
  lirpa::VerifyResult r = lirpa::verify(g, p, opt, progress);
  if (!o.results.empty()) lirpa::write_results_file(o.results, r);
  if (!o.quiet) {
    std::fprintf(stderr, "[%7.1f s] %s", r.seconds, lirpa::verdict_name(r.verdict).c_str());
    if (!r.decided_by.empty()) std::fprintf(stderr, " (by %s", r.decided_by.c_str());
    if (!r.decided_by.empty()) std::fprintf(stderr, ", %lld domains)", static_cast<long long>(r.domains_visited));
    if (!r.reason.empty()) std::fprintf(stderr, ": %s", r.reason.c_str());
    std::fprintf(stderr, "\n");
  }
  std::cout << lirpa::verdict_name(r.verdict) << std::endl;
  return 0;
}

}  // namespace

void add_verify_command(CLI::App& app, CommandBody& body) {
  auto o = std::make_shared<VerifyCli>();
  CLI::App* cmd = app.add_subcommand("verify", "decide a VNN-LIB property: sat, unsat, timeout or unknown");
  cmd->add_option("model", o->model, "network (.onnx or .nnet)")->required()->check(CLI::ExistingFile);
  cmd->add_option("property", o->property, "VNN-LIB property (the unsafe region)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--timeout", o->timeout, "seconds (default 300, or the config's timeout)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--results", o->results, "write the VNN-COMP results file here");
  cmd->add_option("--config", o->config, "YAML options (attack, alpha, beta, bab)")->check(CLI::ExistingFile);
  cmd->add_flag("--quiet", o->quiet, "no progress on standard error");
  cmd->callback([o, &body] { body = [o] { return run_verify(*o); }; });
}

}  // namespace tessera::app
