// verify(): attack, incomplete verification (CROWN, alpha-CROWN), then branch and bound on
// every (input box, output conjunction) pair not yet proven infeasible.

#include <ATen/ATen.h>

#include "lirpa/attack/pgd.h"
#include "lirpa/bab/bab.h"
#include "lirpa/verify/incomplete.h"
#include "lirpa/verify/relu_net.h"
#include "lirpa/verify/run_clock.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/lirpa/verify.h"

namespace tessera::lirpa {
namespace {

struct Run {
  const Graph& graph;
  const Property& property;
  const VerifyOptions& options;
  ProgressFn progress;
  detail::RunClock clock;
  VerifyResult result;
  std::string bab_kind;  // the last branch and bound run
  /// Ranks that split each ReLU-splitting batch (`options.shard_state`), else null.
  std::shared_ptr<dist::Communicator> state_comm;

  bool expired() const { return clock.expired(); }
  double elapsed() const { return clock.elapsed(); }
  void phase(const std::string& name, double lower = 0) {
    if (progress) progress(Progress{name, 0, 0, lower, elapsed()});
  }
  // Keeps x as the answer when the forward pass confirms it.
  bool confirm(const at::Tensor& x, const std::string& by) {
    auto ce = check_counterexample(graph, property, x);
    if (!ce) return false;
    result.verdict = Verdict::Sat;
    result.counterexample = ce;
    result.decided_by = by;
    return true;
  }
};

bool run_attack(Run& run, const std::optional<detail::ReluNet>& net) {
  if (!run.options.attack.enabled) return false;
  run.phase("attack");
  detail::BatchFn f = [&](const at::Tensor& x) {
    return net ? net->forward(x) : run.graph.forward(x, at::kDouble);
  };
  for (const PropertyCase& pc : run.property.cases) {
    for (const OutputConjunction& oc : pc.disjuncts) {
      if (run.expired()) return false;
      detail::AttackResult r = detail::pgd_attack(f, pc.lower, pc.upper, oc.c, oc.rhs, run.options.attack, {},
                                                  [&] { return run.expired(); });
      if (r.value <= 0 && run.confirm(r.x, "attack")) return true;
    }
  }
  return false;
}

// Branch and bound on one pair; returns false when the run must stop (sat or timeout).
bool run_bab(Run& run, const detail::ReluNet& net, const PropertyCase& pc, const OutputConjunction& oc,
             bool& undecided) {
  const BabOptions& b = run.options.bab;
  bool input = b.split == SplitKind::Input ||
               (b.split == SplitKind::Auto && pc.lower.numel() <= b.input_split_max_dims);
  run.bab_kind = input ? "bab-input" : "bab-relu";
  detail::BabContext ctx{net, run.options, run.clock,
                         [&](const at::Tensor& x) { return run.confirm(x, input ? "bab-input" : "bab-relu"); },
                         run.progress, input ? "bab-input" : "bab-relu", run.state_comm};
  detail::BabProblem problem{pc.lower.to(at::kDouble), pc.upper.to(at::kDouble), oc.c.to(at::kDouble),
                             oc.rhs.to(at::kDouble)};
  detail::BabOutcome out = input ? detail::input_split_bab(ctx, problem) : detail::relu_split_bab(ctx, problem);
  run.result.domains_visited += out.visited;
  switch (out.status) {
    case detail::BabStatus::Proven: return true;
    case detail::BabStatus::Falsified: return false;
    case detail::BabStatus::Timeout:
      run.result.verdict = Verdict::Timeout;
      run.result.reason = "timeout after " + std::to_string(run.elapsed()) + " s in " + ctx.phase;
      return false;
    case detail::BabStatus::Exhausted:
      undecided = true;
      run.result.reason = ctx.phase + " gave up: " + out.reason;
      return true;
  }
  return true;
}

}  // namespace

VerifyResult verify(const Graph& graph, const Property& property, const VerifyOptions& options,
                    const ProgressFn& progress, std::shared_ptr<dist::Communicator> comm) {
  check_property_sizes(property, graph.input_size(), graph.output_size(), "the property and the network");
  const bool shard_state = options.shard_state && comm && comm->size() > 1;
  Run run{graph, property, options, progress, detail::RunClock(options.timeout, comm), {}, {},
          shard_state ? comm : nullptr};
  auto finish = [&]() {
    run.result.seconds = run.elapsed();
    return run.result;
  };
  std::string why;
  std::optional<detail::ReluNet> net = detail::extract_relu_net(graph, &why, comm);
  if (run_attack(run, net)) return finish();
  // open[c][d]: disjunct d of case c not proven infeasible yet
  std::vector<std::vector<bool>> open;
  std::string by =
      detail::incomplete_verification(graph, property, options, open, run.progress, run.clock, run.state_comm);
  bool all_proven = true;
  for (const auto& row : open)
    for (bool o : row) all_proven = all_proven && !o;
  if (all_proven) {
    run.result.verdict = Verdict::Unsat;
    run.result.decided_by = by;
    return finish();
  }
  if (!options.bab.enabled || !net) {
    run.result.verdict = run.expired() ? Verdict::Timeout : Verdict::Unknown;
    run.result.reason = !options.bab.enabled ? "branch and bound is disabled"
                                             : "branch and bound needs a chain of affine layers and ReLUs: " + why;
    return finish();
  }
  bool undecided = false;
  for (size_t c = 0; c < property.cases.size(); ++c) {
    for (size_t d = 0; d < property.cases[c].disjuncts.size(); ++d) {
      if (!open[c][d]) continue;
      if (!run_bab(run, *net, property.cases[c], property.cases[c].disjuncts[d], undecided)) return finish();
    }
  }
  if (undecided) {
    run.result.verdict = Verdict::Unknown;
  } else {
    run.result.verdict = Verdict::Unsat;
    run.result.decided_by = run.bab_kind;
  }
  return finish();
}

}  // namespace tessera::lirpa
