// `tessera verify MODEL PROPERTY [--timeout S] [--results FILE] [--config FILE.yaml] [--quiet]
// [--shard none|fsdp|fsdp+state|tp] [--json FILE]`: decide a VNN-LIB property. The last line of
// standard output is the verdict (sat, unsat, timeout or unknown); progress goes to standard
// error. Exit code 0 for every verdict. The timeout counts from the process start and is kept
// within a second by a watchdog. Under mpirun with `--shard fsdp` every rank keeps 1/P of
// the weights and does the same work; with `fsdp+state` ReLU-splitting branch and bound
// also splits each batch of sub-domains across the ranks; with `tp` each rank keeps its rows
// of every weight matrix and multiplies by them (tensor-parallel products, the same passes
// otherwise). Rank 0 answers.

#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "allocator_tuning.h"
#include "cli_checks.h"
#include "commands.h"
#include "json_values.h"
#include "model_loading.h"
#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/core/watchdog.h"
#include "timeout_answer.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/sharded_param_store.h"
#include "tessera/lirpa/verify.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::app {
namespace {

struct VerifyCli {
  std::string model, property, results, config, shard = "none", json;
  double timeout = -1;
  bool quiet = false;
};

void print_progress(const lirpa::Progress& p) {
  const std::string done = " done";  // an incomplete stage's end: its steps and worst open disjunct's bound
  if (p.phase.size() > done.size() && p.phase.compare(p.phase.size() - done.size(), done.size(), done) == 0)
    std::fprintf(stderr, "[%7.1f s] %s: %d steps, lower bound %.6g\n", p.elapsed, p.phase.c_str(), p.iterations,
                 p.lower);
  else if (p.domains > 0 || p.visited > 0)
    std::fprintf(stderr, "[%7.1f s] %s: %lld domains left, %lld visited, lower bound %.6g\n", p.elapsed,
                 p.phase.c_str(), static_cast<long long>(p.domains), static_cast<long long>(p.visited), p.lower);
  else
    std::fprintf(stderr, "[%7.1f s] %s\n", p.elapsed, p.phase.c_str());
}

/// The answer: results file, a summary on standard error, the verdict as the last line of
/// standard output.
void answer(const VerifyCli& o, const lirpa::VerifyResult& r) {
  if (!o.results.empty()) lirpa::write_results_file(o.results, r);
  if (!o.quiet) {
    std::fprintf(stderr, "[%7.1f s] %s", r.seconds, lirpa::verdict_name(r.verdict).c_str());
    if (!r.decided_by.empty()) std::fprintf(stderr, " (by %s", r.decided_by.c_str());
    if (!r.decided_by.empty()) std::fprintf(stderr, ", %lld domains)", static_cast<long long>(r.domains_visited));
    if (!r.reason.empty()) std::fprintf(stderr, ": %s", r.reason.c_str());
    std::fprintf(stderr, "\n");
  }
  std::cout << lirpa::verdict_name(r.verdict) << std::endl;
}

/// `--json FILE`'s contents: the verdict, its figures and every rank's memory.
nlohmann::json verify_json(const VerifyCli& o, const lirpa::VerifyResult& r, int ranks,
                           const std::vector<int64_t>& baseline, const std::vector<int64_t>& peak) {
  return {{"verdict", lirpa::verdict_name(r.verdict)}, {"decided_by", r.decided_by},
          {"reason", r.reason}, {"domains_visited", r.domains_visited}, {"seconds", r.seconds},
          {"shard", o.shard}, {"ranks", ranks}, {"baseline_bytes", baseline}, {"peak_bytes", peak}};
}

void write_json(const VerifyCli& o, const lirpa::VerifyResult& r, int ranks, const std::vector<int64_t>& baseline,
                const std::vector<int64_t>& peak) {
  std::ofstream out(o.json);
  TESSERA_CHECK(out.good(), InvalidInput, "cannot write '", o.json, "'");
  out << verify_json(o, r, ranks, baseline, peak).dump() << "\n";
}

/// What the watchdog answers when the run overruns its timeout of `total` seconds.
TimeoutAnswer timeout_answer(const VerifyCli& o, double total, int ranks) {
  lirpa::VerifyResult r;
  r.verdict = lirpa::Verdict::Timeout;
  r.reason = "the run overran its timeout of " + std::to_string(total) + " s; stopped by the watchdog";
  return TimeoutAnswer({o.results, o.json, o.quiet}, lirpa::results_text(r), verify_json(o, r, ranks, {}, {}),
                       r.reason);
}

/// How long after the deadline the watchdog answers for a run that has not.
constexpr double kWatchdogGrace = 0.5;
/// Under MPI, how long a rank other than 0 waits for rank 0 to end the job.
constexpr int kWatchdogAbortWait = 5;

int run_verify(const VerifyCli& o) {
  keep_freed_memory();
  auto comm = dist::world();
  const bool root = comm->rank() == 0;
  const lirpa::ShardMode shard = lirpa::parse_shard_mode(o.shard);
  TESSERA_CHECK(shard != lirpa::ShardMode::TpHeads, Unsupported,
                "verify --shard tp-heads is not built (alpha-CROWN and branch and bound do not cross its zones yet): "
                "use `tessera bounds --shard tp-heads` (IBP, CROWN) or --shard tp / fsdp / fsdp+state");
  lirpa::VerifyOptions opt = o.config.empty() ? lirpa::VerifyOptions{} : lirpa::load_verify_config(o.config);
  if (o.timeout > 0) opt.timeout = o.timeout;  // the flag overrides the file
  // The timeout counts from the process start: loading the libraries takes ~1 s before main.
  const double total = opt.timeout, left = std::max(total - core::seconds_since_process_start(), 0.0);
  opt.timeout = std::max(left, 1e-3);
  // the domains bounded so far, as the last progress report said (for the watchdog's answer)
  auto visited = std::make_shared<std::atomic<int64_t>>(0);
  // Prepared now: giving it allocates nothing, so a rank whose main thread is stuck answers.
  const TimeoutAnswer on_timeout = timeout_answer(o, total, comm->size());
  const std::string abort_message = "tessera verify: the watchdog ended every rank at the timeout";
  core::AnswerWatchdog watchdog(left + kWatchdogGrace, [&on_timeout, &abort_message, root, comm, visited] {
    // Under mpirun a rank that exits without MPI_Finalize fails the job, and the main threads
    // may be inside a collective: the job is ended by MPI_Abort with code 0 (mpirun then exits
    // 0). Rank 0 answers and ends it; another rank does both only if rank 0 has not ended the
    // job kWatchdogAbortWait seconds later (its main thread and watchdog are stuck).
    if (!root) std::this_thread::sleep_for(std::chrono::seconds(kWatchdogAbortWait));
    on_timeout.give(visited->load());
    if (comm->size() == 1) return;  // the watchdog exits with code 0
    comm->abort(0, abort_message);
  });
  const bool sharded = splits_parameters(shard, *comm);
  opt.shard_state = shard == lirpa::ShardMode::FsdpState;  // batches of sub-domains split across ranks
  lirpa::Graph g = load_model(o.model, comm, shard);
  lirpa::Property p = load_property(o.property, *comm);
  lirpa::check_property_sizes(p, g.input_size(), g.output_size(), "'" + o.property + "' on '" + o.model + "'");
  lirpa::ProgressFn progress = [quiet = o.quiet || !root, visited](const lirpa::Progress& p) {
    visited->store(p.visited);
    if (!quiet) print_progress(p);
  };
  core::MemoryPhase phase("verify");  // baseline: the model (or its shard) loaded
  lirpa::VerifyResult r = lirpa::verify(g, p, opt, progress, sharded ? comm : nullptr);
  core::PhaseRecord mem = phase.finish();
  std::vector<int64_t> baseline = per_rank(*comm, mem.baseline_bytes), peak = per_rank(*comm, mem.peak_bytes);
  watchdog.claim();
  if (!root) return 0;
  if (!o.json.empty()) write_json(o, r, comm->size(), baseline, peak);
  answer(o, r);
  return 0;
}

}  // namespace

void add_verify_command(CLI::App& app, CommandBody& body) {
  auto o = std::make_shared<VerifyCli>();
  CLI::App* cmd = app.add_subcommand("verify", "decide a VNN-LIB property: sat, unsat, timeout or unknown");
  cmd->add_option("model", o->model, "network (.onnx or .nnet)")->required()->check(CLI::ExistingFile);
  cmd->add_option("property", o->property, "VNN-LIB property (the unsafe region)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--timeout", o->timeout, "seconds from the process start (default 300, or the config's timeout)")
      ->check(kPositive);
  cmd->add_option("--results", o->results, "write the VNN-COMP results file here");
  cmd->add_option("--config", o->config, "YAML options (attack, alpha, beta, bab)")->check(CLI::ExistingFile);
  cmd->add_flag("--quiet", o->quiet, "no progress on standard error");
  cmd->add_option("--shard", o->shard, "under mpirun: none (every rank holds the whole network), fsdp "
                                       "(each rank keeps 1/P of every weight, gathered on use) or fsdp+state "
                                       "(also: ReLU branch and bound splits each batch of sub-domains across ranks) or tp "
                                       "(tensor parallelism: each rank multiplies by its rows of every weight matrix); "
                                       "tp-heads is for `bounds` only");
  cmd->add_option("--json", o->json, "also write the verdict, domain count and per-rank memory as JSON here");
  cmd->callback([o, &body] { body = [o] { return run_verify(*o); }; });
}

}  // namespace tessera::app
