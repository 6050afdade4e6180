// CROWN then alpha-CROWN on the specification rows of every input box (the bounds API):
// first alpha-CROWN on the final rows only (intermediate bounds fixed: one backward pass per
// step), then, when alpha.intermediate is set, with the intermediate bounds optimised too,
// within a share of the time left (its passes from every intermediate node can cost many
// CROWN runs per step: 72 s of 100 on the VNN-COMP ViT; what it leaves is branch and
// bound's). Rows already proven leave the loss (AlphaOptions::target). The full stage starts
// from the final-rows stage's best final parameters (AlphaOptions::final_start), so its
// first step gives that stage's bound and the final rows' work is not done again. Each
// stage reports its end (Progress::iterations, and its bound of the worst open disjunct).

#include "lirpa/verify/incomplete.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "tessera/lirpa/bounds.h"

namespace tessera::lirpa::detail {

std::vector<bool> proven_disjuncts(const PropertyCase& pc, const at::Tensor& g_lower, double margin) {
  std::vector<bool> proven;
  int64_t row = 0;
  for (const OutputConjunction& oc : pc.disjuncts) {
    int64_t k = oc.c.size(0);
    // the conjunction cannot hold when one of its rows is positive everywhere: max_k g_k > margin
    bool p = k > 0 && g_lower.slice(0, row, row + k).max().item<double>() > margin;
    proven.push_back(p);
    row += k;
  }
  return proven;
}

namespace {

// The full alpha-CROWN stage's share of the time left when it starts (a cap: it stops
// earlier when every row is proven or the bound stalls). On the VNN-COMP ViT, 20 full steps
// prove 4021 outright (every row > 0.017) while 60 s of branch and bound moved no property's
// bound by more than 0.1; on ReLU networks the stage takes a second or less and the cap never
// binds.
constexpr double kFullAlphaShare = 0.75;

bool all_closed(const std::vector<std::vector<bool>>& open) {
  for (const auto& row : open)
    for (bool o : row)
      if (o) return false;
  return true;
}

// What one stage carries to the next, per property case: the tightest intermediate bounds
// and the final rows' parameters at their best (alpha-CROWN stages).
struct StageCarry {
  std::vector<std::map<int, Interval>>& intermediate;
  std::vector<std::map<int, at::Tensor>>& final_alpha;
};

// Bounds every case with open disjuncts; returns the stage's end report: its steps and the
// worst bound among the disjuncts it started open (+inf when none).
Progress bound_stage(const Graph& graph, const Property& property, const VerifyOptions& options, Method method,
                     const AlphaOptions& alpha, std::vector<std::vector<bool>>& open, const RunClock& clock,
                     const std::shared_ptr<dist::Communicator>& shard_rows, StageCarry& carry) {
  Progress report;
  report.lower = INFINITY;
  BoundOptions bo;
  bo.shard_rows = shard_rows;  // rows of each backward pass split across ranks (when implemented)
  bo.method = method;
  bo.dtype = at::kDouble;
  bo.alpha = alpha;
  bo.want_upper = false;  // only lower(C y) - rhs decides a disjunct
  bo.keep_intermediate = true;
  bo.intersect_ibp = true;  // the tightest sound bounds, not auto_LiRPA's CROWN exactly
  for (size_t c = 0; c < property.cases.size(); ++c) {
    const PropertyCase& pc = property.cases[c];
    bool any_open = false;
    for (bool o : open[c]) any_open = any_open || o;
    if (!any_open || clock.expired()) continue;
    at::Tensor spec = pc.spec_matrix();
    if (spec.size(0) == 0) continue;
    std::map<int, Interval>& known = carry.intermediate[c];
    bo.known_intermediate = known.empty() ? nullptr : &known;  // the earlier stage's
    bo.alpha.target = pc.spec_rhs().to(at::kDouble) + options.margin;  // lower(C y) above it: the row is proven
    bo.alpha.final_start = carry.final_alpha[c];                       // the earlier alpha stage's best
    BoundsResult r = compute_bounds(graph, pc.lower, pc.upper, bo, spec);
    known = std::move(r.intermediate);
    if (method == Method::AlphaCrown) carry.final_alpha[c] = std::move(r.final_alpha);
    report.iterations = std::max(report.iterations, r.iterations);
    at::Tensor g = r.lower.to(at::kDouble) - pc.spec_rhs().to(at::kDouble);  // lower(C y) - rhs
    std::vector<bool> proven = proven_disjuncts(pc, g, options.margin);
    int64_t row = 0;
    for (size_t d = 0; d < proven.size(); ++d) {
      const int64_t k = pc.disjuncts[d].c.size(0);
      if (open[c][d] && k > 0)  // the disjunct's bound: max_k (lower(c_k y) - rhs_k)
        report.lower = std::min(report.lower, g.slice(0, row, row + k).max().item<double>());
      row += k;
      if (proven[d]) open[c][d] = false;
    }
  }
  return report;
}

// The stage's end, reported as "<name> done".
void report_end(const ProgressFn& progress, const std::string& name, Progress end, const RunClock& clock) {
  if (!progress) return;
  end.phase = name + " done";
  end.elapsed = clock.elapsed();
  progress(end);
}

}  // namespace

std::string incomplete_verification(const Graph& graph, const Property& property, const VerifyOptions& options,
                                    std::vector<std::vector<bool>>& open, const ProgressFn& progress,
                                    const RunClock& clock, std::shared_ptr<dist::Communicator> shard_rows,
                                    std::vector<std::map<int, Interval>>& intermediate,
                                    std::vector<std::map<int, at::Tensor>>& final_alpha) {
  open.clear();
  intermediate.assign(property.cases.size(), {});
  final_alpha.assign(property.cases.size(), {});
  for (const PropertyCase& pc : property.cases) open.emplace_back(pc.disjuncts.size(), true);
  StageCarry carry{intermediate, final_alpha};
  if (progress) progress(Progress{"crown", 0, 0, 0, clock.elapsed()});
  report_end(progress, "crown",
             bound_stage(graph, property, options, Method::Crown, options.alpha, open, clock, shard_rows, carry), clock);
  if (all_closed(open)) return "crown";
  if (!options.alpha_enabled) return "";
  if (progress) progress(Progress{"alpha-crown-final", 0, 0, 0, clock.elapsed()});
  AlphaOptions alpha = options.alpha;
  alpha.intermediate = false;
  alpha.stop = clock.stop_test();
  report_end(progress, "alpha-crown-final",
             bound_stage(graph, property, options, Method::AlphaCrown, alpha, open, clock, shard_rows, carry), clock);
  if (all_closed(open)) return "alpha-crown";
  if (!options.alpha.intermediate || clock.expired()) return "";
  if (progress) progress(Progress{"alpha-crown", 0, 0, 0, clock.elapsed()});
  // every rank stops at the same step: rank 0's clock (agreed) decides
  const double start = clock.agreed(clock.elapsed());
  const double budget = kFullAlphaShare * std::max(0.0, clock.seconds() - start);  // the same on every rank
  alpha.intermediate = true;
  alpha.stop = [&clock, start, budget] { return clock.expired() || clock.agreed(clock.elapsed()) - start > budget; };
  report_end(progress, "alpha-crown",
             bound_stage(graph, property, options, Method::AlphaCrown, alpha, open, clock, shard_rows, carry), clock);
  return all_closed(open) ? "alpha-crown" : "";
}

}  // namespace tessera::lirpa::detail
