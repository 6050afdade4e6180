// tp_verify: complete verification on a tensor-parallel network. The same pipeline as
// verify() (attack, incomplete bounds, branch and bound per open disjunct), with every pass
// made of TP collectives: PGD through a differentiable TP forward pass, CROWN and
// alpha-CROWN by tp_compute_bounds, branch and bound (input or ReLU splitting) by TP CROWN.

#include <ATen/ATen.h>

#include "lirpa/attack/pgd.h"
#include "lirpa/shard/tp_bab.h"
#include "lirpa/shard/tp_detail.h"
#include "lirpa/verify/incomplete.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"

namespace tessera::lirpa {
namespace {

struct TpRun {
  const TpNetwork& net;
  const Property& property;
  const VerifyOptions& options;
  ProgressFn progress;
  detail::RunClock clock;
  VerifyResult result;

  void phase(const std::string& name) {
    if (progress) progress(Progress{name, 0, 0, 0, clock.elapsed()});
  }
  // Keeps x as the answer when the TP forward pass (float64) confirms it. Collective.
  bool confirm(const at::Tensor& x, const std::string& by) {
    at::NoGradGuard no_grad;
    at::Tensor xd = detail::same_everywhere(net.comm(), x.detach().to(at::kDouble).reshape({1, -1}));
    at::Tensor y = detail::same_everywhere(net.comm(), net.forward(xd, at::kDouble));  // y = f(x)
    auto ce = check_counterexample_outputs(property, xd, y);
    if (!ce) return false;
    result.verdict = Verdict::Sat;
    result.counterexample = ce;
    result.decided_by = by;
    return true;
  }
};

bool attack(TpRun& run) {
  if (!run.options.attack.enabled) return false;
  run.phase("attack");
  detail::BatchFn f = [&](const at::Tensor& x) { return detail::tp_forward_differentiable(run.net, x); };
  for (const PropertyCase& pc : run.property.cases) {
    for (const OutputConjunction& oc : pc.disjuncts) {
      if (run.clock.expired()) return false;
      detail::AttackResult r = detail::pgd_attack(f, pc.lower, pc.upper, oc.c, oc.rhs, run.options.attack, {},
                                                  [&] { return run.clock.expired(); });
      if (r.value <= 0 && run.confirm(r.x, "attack")) return true;
    }
  }
  return false;
}

bool any_open(const std::vector<std::vector<bool>>& open) {
  for (const auto& row : open)
    for (bool o : row)
      if (o) return true;
  return false;
}

// `method` (TP CROWN or alpha-CROWN) on the specification rows of every case with an open
// disjunct; closes open[c][d] for each disjunct d of case c it proves infeasible.
void bound_stage(TpRun& run, Method method, std::vector<std::vector<bool>>& open) {
  BoundOptions bo;
  bo.method = method;
  bo.dtype = at::kDouble;
  bo.alpha = run.options.alpha;
  bo.alpha.stop = run.clock.stop_test();  // the best bound so far at the timeout
  bo.want_upper = false;                  // only lower(C y) - rhs decides a disjunct
  for (size_t c = 0; c < run.property.cases.size(); ++c) {
    const PropertyCase& pc = run.property.cases[c];
    at::Tensor spec = pc.spec_matrix();
    bool open_here = false;
    for (bool o : open[c]) open_here = open_here || o;
    if (!open_here || spec.size(0) == 0 || run.clock.expired()) continue;
    BoundsResult r = tp_compute_bounds(run.net, pc.lower, pc.upper, bo, spec.to(at::kDouble));
    at::Tensor g = r.lower.to(at::kDouble) - pc.spec_rhs().to(at::kDouble);  // lower(C y) - rhs
    std::vector<bool> proven = detail::proven_disjuncts(pc, g, run.options.margin);
    for (size_t d = 0; d < proven.size(); ++d)
      if (proven[d]) open[c][d] = false;
  }
}

// CROWN, then alpha-CROWN, on every case's specification rows; open[c][d]: disjunct d of
// case c not proven. `by`: the method that closed the last one.
std::vector<std::vector<bool>> incomplete(TpRun& run, std::string& by) {
  std::vector<std::vector<bool>> open;
  for (const PropertyCase& pc : run.property.cases) open.emplace_back(pc.disjuncts.size(), true);
  run.phase("crown");
  bound_stage(run, Method::Crown, open);
  by = "crown";
  if (!any_open(open) || !run.options.alpha_enabled) return open;
  run.phase("alpha-crown");
  bound_stage(run, Method::AlphaCrown, open);
  by = "alpha-crown";
  return open;
}

}  // namespace

VerifyResult tp_verify(const TpNetwork& net, const Property& property, const VerifyOptions& options,
                       const ProgressFn& progress) {
  check_property_sizes(property, net.input_size(), net.output_size(), "the property and the network");
  TpRun run{net, property, options, progress, detail::RunClock(options.timeout, net.shared_comm()), {}};
  auto finish = [&] {
    run.result.seconds = run.clock.elapsed();
    return run.result;
  };
  if (attack(run)) return finish();
  std::string by;
  std::vector<std::vector<bool>> open = incomplete(run, by);
  if (!any_open(open)) {
    run.result.verdict = Verdict::Unsat;
    run.result.decided_by = by;
    return finish();
  }
  if (!options.bab.enabled || run.clock.expired()) {
    run.result.verdict = run.clock.expired() ? Verdict::Timeout : Verdict::Unknown;
    run.result.reason = options.bab.enabled ? "timeout in " + by : "branch and bound is disabled";
    return finish();
  }
  bool undecided = false;
  const bool input = options.bab.split == SplitKind::Input ||
                     (options.bab.split == SplitKind::Auto && net.input_size() <= options.bab.input_split_max_dims);
  const std::string kind = input ? "bab-input-tp" : "bab-relu-tp";
  detail::TpBabContext ctx{net, options, run.clock, [&](const at::Tensor& x) { return run.confirm(x, kind); },
                           progress, kind};
  for (size_t c = 0; c < property.cases.size(); ++c) {
    const PropertyCase& pc = property.cases[c];
    for (size_t d = 0; d < pc.disjuncts.size(); ++d) {
      if (!open[c][d]) continue;
      const OutputConjunction& oc = pc.disjuncts[d];
      detail::BabProblem problem{pc.lower.to(at::kDouble), pc.upper.to(at::kDouble), oc.c.to(at::kDouble),
                                 oc.rhs.to(at::kDouble)};
      detail::BabOutcome out = input ? detail::tp_input_split_bab(ctx, problem) : detail::tp_relu_split_bab(ctx, problem);
      run.result.domains_visited += out.visited;
      if (out.status == detail::BabStatus::Falsified) return finish();
      if (out.status == detail::BabStatus::Timeout) {
        run.result.verdict = Verdict::Timeout;
        run.result.reason = "timeout after " + std::to_string(run.clock.elapsed()) + " s in " + kind;
        return finish();
      }
      if (out.status == detail::BabStatus::Exhausted) {
        undecided = true;
        run.result.reason = kind + " gave up: " + out.reason;
      }
    }
  }
  run.result.verdict = undecided ? Verdict::Unknown : Verdict::Unsat;
  if (!undecided) run.result.decided_by = kind;
  return finish();
}

}  // namespace tessera::lirpa
