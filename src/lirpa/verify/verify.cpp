// verify(): attack, incomplete verification (CROWN, alpha-CROWN), then branch and bound on
// the disjuncts not yet proven infeasible: input splitting on each (input box, output
// conjunction) pair, ReLU splitting on a case's open disjuncts together.

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "lirpa/attack/pgd.h"
#include "lirpa/bab/bab.h"
#include "lirpa/bab/graph_bab.h"
#include "lirpa/verify/dense_form.h"
#include "lirpa/verify/incomplete.h"
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

// PGD through the graph in float32 (half the float64 time); a point is kept only when the
// float64 forward pass confirms it.
detail::BatchFn float_forward(const Graph& graph) {
  return [&graph](const at::Tensor& x) { return graph.forward(x, at::kFloat).to(at::kDouble); };
}

bool run_attack(Run& run) {
  if (!run.options.attack.enabled) return false;
  run.phase("attack");
  const detail::BatchFn f = float_forward(run.graph);
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

// Escalating PGD on every open disjunct while branch and bound runs. Some counterexamples lie
// in regions too small for the first attack's few restarts, and behind a disjunct whose proof
// does not end (input splitting takes the disjuncts one after another): ACAS Xu 2_9 prop_8
// is found by the first round (bench/RESULTS.md). Round k
// (k = 0, 1, ...) runs kFirstRestarts * 2^k random starts (capped), after 4 s of branch and
// bound and only while the rounds' time stays within kShare of the time since then, so
// instances decided in seconds do not pay for it. The rounds' PGD runs in float32 through the
// graph (float_forward), which brings each round, and so the next, forward.
class SideAttack {
 public:
  static constexpr int kFirstRestarts = 4000, kMaxRestarts = 32000, kSteps = 40;
  static constexpr double kShare = 0.3, kStart = 4.0;

  SideAttack(Run& run, detail::BatchFn f, const std::vector<std::vector<bool>>& open)
      : run_(run), f_(std::move(f)), open_(open) {}

  bool operator()() {
    // its rounds depend on the clock: off in the deterministic mode
    if (!run_.options.attack.enabled || run_.options.bab.force_synchronous) return false;
    double t = run_.clock.agreed(run_.elapsed());
    if (first_ < 0) first_ = t;
    double now = t - first_;  // seconds of branch and bound
    if (now < kStart || spent_ + 2 * last_ > kShare * now) return false;  // the next round costs ~2x the last
    run_.phase("attack-round-" + std::to_string(round_));
    AttackOptions ao = run_.options.attack;
    ao.restarts = std::min(kMaxRestarts, kFirstRestarts << std::min(round_, 3));
    ao.steps = kSteps;
    ao.seed += 1000 + static_cast<uint64_t>(round_++);
    bool found = false;
    for (size_t c = 0; c < run_.property.cases.size() && !found; ++c) {
      const PropertyCase& pc = run_.property.cases[c];
      for (size_t d = 0; d < pc.disjuncts.size() && !found && !run_.expired(); ++d) {
        if (!open_[c][d]) continue;
        const OutputConjunction& oc = pc.disjuncts[d];
        detail::AttackResult r = detail::pgd_attack(f_, pc.lower, pc.upper, oc.c, oc.rhs, ao, {},
                                                    [&] { return run_.expired(); });
        found = r.value <= 0 && run_.confirm(r.x, "attack");
      }
    }
    last_ = run_.clock.agreed(run_.elapsed()) - t;
    spent_ += last_;
    return found;
  }

 private:
  Run& run_;
  detail::BatchFn f_;
  const std::vector<std::vector<bool>>& open_;
  int round_ = 0;
  double first_ = -1, spent_ = 0, last_ = 0;
};

// Records a branch and bound outcome; false when the run must stop (sat or timeout).
bool bab_outcome(Run& run, const detail::BabOutcome& out, const std::string& phase, bool& undecided) {
  run.result.domains_visited += out.visited;
  switch (out.status) {
    case detail::BabStatus::Proven: return true;
    case detail::BabStatus::Falsified: return false;
    case detail::BabStatus::Timeout:
      run.result.verdict = Verdict::Timeout;
      run.result.reason = "timeout after " + std::to_string(run.elapsed()) + " s in " + phase;
      return false;
    case detail::BabStatus::Exhausted:
      undecided = true;
      run.result.reason = phase + " gave up: " + out.reason;
      return true;
  }
  return true;
}

// Input splitting on one pair (its boxes and hand-offs to ReLU splitting on the graph engine;
// `forward`: the float64 forward pass of its counterexample checks; `side` (may be null): the
// escalating PGD between batches, as for ReLU splitting); returns false when the run must
// stop (sat or timeout).
bool run_input_bab(Run& run, const detail::BatchFn& forward, const PropertyCase& pc, const OutputConjunction& oc,
                   SideAttack* side, bool& undecided) {
  run.bab_kind = "bab-input";
  detail::BabContext ctx{forward, run.options, run.clock, [&](const at::Tensor& x) { return run.confirm(x, "bab-input"); },
                         run.progress, "bab-input", run.state_comm, {}, run.graph};
  if (side) ctx.side_attack = [side] { return (*side)(); };
  detail::BabProblem problem{pc.lower.to(at::kDouble), pc.upper.to(at::kDouble), oc.c.to(at::kDouble),
                             oc.rhs.to(at::kDouble), {}};
  return bab_outcome(run, detail::input_split_bab(ctx, problem), ctx.phase, undecided);
}

// ReLU-splitting branch and bound on the graph engine on the open disjuncts `ds` of one case,
// searched together: one pool whose domains carry every disjunct's rows, a domain verified
// once each disjunct has a positive row there (BabProblem::group), so the disjuncts share the
// splits and the intermediate bounds that cost most of a domain. Returns false when the run
// must stop (sat or timeout). `side` (may be null): the escalating PGD between batches,
// only where the forward pass is cheap (dense_form_is_compact): its rounds of thousands of
// restarts through the graph take minutes on a CIFAR ResNet (sri_resnet_a: one round held
// the rest of a 300 s run); the search's own PGD from its worst domains' vertices runs
// every `bab.attack_every` batches on every network.
bool run_relu_bab(Run& run, const PropertyCase& pc, const std::vector<size_t>& ds,
                  const std::map<int, Interval>& intermediate, const std::map<int, at::Tensor>& final_alpha,
                  SideAttack* side, bool& undecided) {
  run.bab_kind = "bab-relu";
  // disjunct i's rows are rows [first[i], first[i] + K_i) of the case's in the incomplete
  // stage's parameters (the lower side's run, or the first half of [C; -C])
  std::vector<int64_t> first(pc.disjuncts.size() + 1, 0);
  for (size_t i = 0; i < pc.disjuncts.size(); ++i) first[i + 1] = first[i] + pc.disjuncts[i].c.size(0);
  const int64_t total = first.back();
  std::vector<at::Tensor> c, rhs, group;
  for (size_t g = 0; g < ds.size(); ++g) {
    const OutputConjunction& oc = pc.disjuncts.at(ds[g]);
    c.push_back(oc.c.to(at::kDouble));
    rhs.push_back(oc.rhs.to(at::kDouble));
    group.push_back(at::full({oc.c.size(0)}, static_cast<int64_t>(g), at::kLong));
  }
  std::map<int, at::Tensor> rows_alpha;
  for (const auto& [node, t] : final_alpha) {
    if (!t.defined() || (t.size(0) != total && t.size(0) != 2 * total)) continue;
    std::vector<at::Tensor> parts;
    for (size_t d : ds) parts.push_back(t.narrow(0, first[d], first[d + 1] - first[d]));
    rows_alpha[node] = at::cat(parts);
  }
  detail::GraphBabContext ctx{run.graph, run.options, run.clock,
                              [&](const at::Tensor& x) { return run.confirm(x, "bab-relu"); }, run.progress,
                              "bab-relu", {}, &intermediate, run.state_comm, &rows_alpha};
  if (side) ctx.side_attack = [side] { return (*side)(); };
  detail::BabProblem problem{pc.lower.to(at::kDouble).reshape({-1}), pc.upper.to(at::kDouble).reshape({-1}), at::cat(c),
                             at::cat(rhs), ds.size() > 1 ? at::cat(group) : at::Tensor()};
  return bab_outcome(run, detail::graph_relu_split_bab(ctx, problem), ctx.phase, undecided);
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
  // Branch and bound runs on the graph engine for every network; the escalating PGD rounds
  // beside it only where the forward pass is cheap (dense layers). The choices
  // depend on the network alone, so every shard mode runs the same search.
  const BabOptions& bab = options.bab;
  const bool cheap = detail::dense_form_is_compact(graph);
  if (run_attack(run)) return finish();
  // open[c][d]: disjunct d of case c not proven infeasible yet
  std::vector<std::vector<bool>> open;
  std::vector<std::map<int, Interval>> intermediate;  // per case: the root of graph branch and bound
  std::vector<std::map<int, at::Tensor>> final_alpha;  // per case: where its domains' parameters start
  std::string by = detail::incomplete_verification(graph, property, options, open, run.progress, run.clock,
                                                   run.state_comm, intermediate, final_alpha);
  bool all_proven = true;
  for (const auto& row : open)
    for (bool o : row) all_proven = all_proven && !o;
  if (all_proven) {
    run.result.verdict = Verdict::Unsat;
    run.result.decided_by = by;
    return finish();
  }
  if (!options.bab.enabled) {
    run.result.verdict = run.expired() ? Verdict::Timeout : Verdict::Unknown;
    run.result.reason = "branch and bound is disabled";
    return finish();
  }
  bool undecided = false;
  // the side attack's PGD in float32 (its points are confirmed in float64); input splitting's
  // cheap checks of candidate points in float64
  SideAttack side(run, float_forward(graph), open);
  const detail::BatchFn forward = [&graph](const at::Tensor& x) { return graph.forward(x, at::kDouble); };
  // input splitting's hand-offs split ReLUs: a network without any goes to ReLU splitting,
  // which says so
  const bool has_relu = !detail::graph_relus(graph).empty();
  for (size_t c = 0; c < property.cases.size(); ++c) {
    const PropertyCase& pc = property.cases[c];
    const bool input = has_relu && (bab.split == SplitKind::Input ||
                                    (bab.split == SplitKind::Auto && pc.lower.numel() <= bab.input_split_max_dims));
    std::vector<size_t> ds;  // the case's open disjuncts
    for (size_t d = 0; d < pc.disjuncts.size(); ++d)
      if (open[c][d]) ds.push_back(d);
    // a disjunct without output constraints holds on the whole box: its centre is the answer
    // (branch and bound needs rows)
    const std::string by = input ? "bab-input" : "bab-relu";
    for (size_t d : ds) {
      if (pc.disjuncts[d].c.size(0) > 0) continue;
      if (run.confirm(((pc.lower + pc.upper) / 2).reshape({-1}), by)) return finish();
      undecided = true;
      run.result.reason = "a disjunct without output constraints and no point of the box confirmed";
    }
    ds.erase(std::remove_if(ds.begin(), ds.end(), [&](size_t d) { return pc.disjuncts[d].c.size(0) == 0; }), ds.end());
    if (ds.empty()) continue;
    if (!input && bab.disjuncts_together) {
      if (!run_relu_bab(run, pc, ds, intermediate[c], final_alpha[c], cheap ? &side : nullptr, undecided)) return finish();
      continue;
    }
    for (size_t d : ds) {
      bool go = input ? run_input_bab(run, forward, pc, pc.disjuncts[d], cheap ? &side : nullptr, undecided)
                      : run_relu_bab(run, pc, {d}, intermediate[c], final_alpha[c], cheap ? &side : nullptr, undecided);
      if (!go) return finish();
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
