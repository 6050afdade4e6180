// Input-splitting branch and bound: a stack of boxes, processed in large batches (the
// most recently split, worst-bounded boxes first: depth first, so the stack stays small).
// Each box of a batch is bisected along the best of its two (or five: see the portfolio
// below) largest-smear dimensions (all tried); all children are bounded at once by
// bound_input_boxes (forward linear bounds and backward CROWN of the unstable neurons,
// intersected with each other and with the parent box's layer bounds, which every open box
// keeps for its children); children near verification get alpha-CROWN (alpha_near_verified);
// verified children are dropped; the minimising vertex of every unverified
// child is tried as a counterexample, a few PGD steps run inside the worst children of every
// batch, and PGD on the whole region from the worst boxes' centres now and then. In the
// portfolio phase the five-candidate search replaces the two-candidate one and hands its
// lowest-bounded boxes over to ReLU splitting (hand_off).

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>

#include "lirpa/attack/pgd.h"
#include "lirpa/bab/bab.h"
#include "lirpa/bab/input_bounds.h"

namespace tessera::lirpa::detail {

at::Tensor relative_widths(const at::Tensor& root_width, const at::Tensor& xl, const at::Tensor& xu) {
  return (xu - xl) / root_width.reshape({1, -1}).clamp_min(1e-300);  // (u_i - l_i) / (U_i - L_i)
}

at::Tensor point_dimensions(const at::Tensor& root_width, const at::Tensor& xl, const at::Tensor& xu,
                            double point_width) {
  return (xu - xl) <= root_width.reshape({1, -1}) * point_width;  // u_i - l_i <= eps (U_i - L_i)
}

at::Tensor thin_dimensions(const at::Tensor& root_width, const at::Tensor& xl, const at::Tensor& xu, double ratio) {
  at::Tensor rel = relative_widths(root_width, xl, xu);
  return rel < std::get<0>(rel.max(1, /*keepdim=*/true)) * ratio;
}

at::Tensor negligible_smear(const at::Tensor& smear, double ratio) {
  return smear < std::get<0>(smear.max(1, /*keepdim=*/true)) * ratio;  // s_i < ratio max_j s_j
}

namespace {

/// Boxes with their score (best row's lower bound), smear scores and hidden layers' bounds,
/// as rows of one growable tensor [capacity, 3n + 1 + 2H] (H hidden neurons): xl, xu, score,
/// smear, then each layer's lower bounds, then each layer's upper bounds.
class BoxStack {
 public:
  BoxStack(int64_t n, std::vector<int64_t> widths)
      : n_(n), widths_(std::move(widths)), hidden_(std::accumulate(widths_.begin(), widths_.end(), int64_t{0})),
        data_(at::empty({1024, 3 * n + 1 + 2 * hidden_}, at::kDouble)) {}
  int64_t size() const { return size_; }
  double min_score() const {
    return size_ ? data_.narrow(0, 0, size_).select(1, 2 * n_).min().item<double>() : 0.0;
  }

  /// Pushes rows [m, 3n + 1], sorted so that the lowest score is popped first.
  void push(const at::Tensor& rows) {
    int64_t m = rows.size(0);
    if (m == 0) return;
    if (size_ + m > data_.size(0)) {
      at::Tensor bigger = at::empty({std::max(2 * data_.size(0), size_ + m), data_.size(1)}, at::kDouble);
      bigger.narrow(0, 0, size_).copy_(data_.narrow(0, 0, size_));
      data_ = bigger;
    }
    at::Tensor order = std::get<1>(rows.select(1, 2 * n_).sort(0, /*descending=*/true));
    data_.narrow(0, size_, m).copy_(rows.index_select(0, order));
    size_ += m;
  }

  /// Removes and returns the last `b` rows.
  at::Tensor pop(int64_t b) {
    b = std::min(b, size_);
    size_ -= b;
    return data_.narrow(0, size_, b).clone();
  }

  /// Removes and returns the `b` rows of lowest score (best first), keeping the others' order.
  at::Tensor pop_lowest(int64_t b) {
    b = std::min(b, size_);
    at::Tensor live = data_.narrow(0, 0, size_);
    at::Tensor take = std::get<1>(live.select(1, 2 * n_).topk(b, 0, /*largest=*/false));
    at::Tensor keep = at::ones({size_}, at::kBool).index_fill_(0, take, false);
    at::Tensor out = live.index_select(0, take);
    at::Tensor rest = live.index_select(0, at::nonzero(keep).reshape({-1}));
    size_ = rest.size(0);
    data_.narrow(0, 0, size_).copy_(rest);
    return out;
  }
  at::Tensor xl(const at::Tensor& rows) const { return rows.narrow(1, 0, n_); }
  at::Tensor xu(const at::Tensor& rows) const { return rows.narrow(1, n_, n_); }
  at::Tensor score(const at::Tensor& rows) const { return rows.select(1, 2 * n_); }
  at::Tensor smear(const at::Tensor& rows) const { return rows.narrow(1, 2 * n_ + 1, n_); }
  /// The boxes' hidden-layer bounds (views into `rows`).
  LayerBounds layers(const at::Tensor& rows) const {
    LayerBounds lb;
    for (int64_t k = 0, col = 3 * n_ + 1; k < static_cast<int64_t>(widths_.size()); col += widths_[k++]) {
      lb.lower.push_back(rows.narrow(1, col, widths_[k]));
      lb.upper.push_back(rows.narrow(1, col + hidden_, widths_[k]));
    }
    return lb;
  }
  /// The worst `m` boxes' centres (PGD starts).
  at::Tensor worst_centres(int64_t m) const {
    m = std::min(m, size_);
    at::Tensor rows = data_.narrow(0, size_ - m, m);
    return (xl(rows) + xu(rows)) / 2;
  }

 private:
  int64_t n_;
  std::vector<int64_t> widths_;
  int64_t hidden_, size_ = 0;
  at::Tensor data_;
};

std::vector<int64_t> hidden_widths(const ReluNet& net) {
  std::vector<int64_t> w;
  for (int k = 1; k < net.layers(); ++k) w.push_back(net.width(k));
  return w;
}

struct Bounded {
  at::Tensor score, rows, a;  // [B], [B], [B, K, n]
  LayerBounds layers;         // per hidden layer [B, n_k]
  Bounded select(const at::Tensor& idx) const {
    Bounded out{score.index_select(0, idx), rows.index_select(0, idx), a.index_select(0, idx), {}};
    for (size_t k = 0; k < layers.lower.size(); ++k) {
      out.layers.lower.push_back(layers.lower[k].index_select(0, idx));
      out.layers.upper.push_back(layers.upper[k].index_select(0, idx));
    }
    return out;
  }
};

Bounded bound_boxes(const ReluNet& net, const at::Tensor& xl, const at::Tensor& xu, const BabProblem& p,
                    const LayerBounds* parent) {
  BoxBounds bb = bound_input_boxes(net, xl, xu, p.c, p.rhs, parent);
  at::Tensor rows = std::get<0>(best_rows(bb.lb));  // the best row drives the split choice
  // a box is verified when max_k g_k > margin on it: the rows' bounds combined
  return {conjunction_lower_bound(bb.lb, bb.a_input, xl, xu), rows, bb.a_input, std::move(bb.layers)};
}

/// alpha-CROWN (alpha_conjunction_bound) on the unverified children `b` (boxes xl, xu) whose
/// bound lies within `bab.input_alpha_band` below the margin, with their layer bounds; a child
/// keeps the better of its two scores.
void alpha_near_verified(BabContext& ctx, const BabProblem& p, const at::Tensor& xl, const at::Tensor& xu,
                         Bounded& b) {
  const VerifyOptions& o = ctx.options;
  if (o.bab.input_alpha_band <= 0 || o.bab.input_alpha_iterations <= 0) return;
  at::Tensor near = at::nonzero(b.score.le(o.margin).logical_and(b.score.gt(o.margin - o.bab.input_alpha_band)))
                        .reshape({-1});
  if (near.numel() == 0) return;
  Bounded s = b.select(near);
  OptimiseOptions oo{o.bab.input_alpha_iterations, o.beta.lr_alpha, o.beta.lr_beta, o.beta.lr_decay, false,
                     [&ctx] { return ctx.expired(); }, {}, {}};
  at::Tensor score = alpha_conjunction_bound(ctx.net, xl.index_select(0, near), xu.index_select(0, near), p.c, p.rhs,
                                             s.layers, oo);
  b.score.index_copy_(0, near, at::max(s.score, score));
}

// Tries points as counterexamples: cheap violation on the ReluNet, confirmation on the graph.
bool try_points(BabContext& ctx, const BabProblem& p, const at::Tensor& x) {
  if (x.size(0) == 0) return false;
  at::NoGradGuard no_grad;
  at::Tensor v = conjunction_violation(ctx.net.forward(x), p.c, p.rhs);
  at::Tensor cand = at::nonzero(v <= 0).reshape({-1});
  for (int64_t i = 0; i < std::min<int64_t>(cand.numel(), 16); ++i)
    if (ctx.confirm(x[cand[i].item<int64_t>()])) return true;
  return false;
}

bool attack_worst(BabContext& ctx, const BabProblem& p, const BoxStack& pool, int64_t batch) {
  if (pool.size() == 0) return false;
  AttackOptions ao = ctx.options.attack;
  ao.seed += static_cast<uint64_t>(batch);
  BatchFn f = [&](const at::Tensor& x) { return ctx.net.forward(x); };
  AttackResult r = pgd_attack(f, p.xl, p.xu, p.c, p.rhs, ao, pool.worst_centres(8), [&] { return ctx.expired(); });
  return r.value <= 0 && ctx.confirm(r.x);
}

/// Local PGD inside the kLocalBoxes worst open boxes of a batch (rows as pushed), from their
/// centres: counterexamples of small volume are found once the boxes around them are small.
constexpr int64_t kLocalBoxes = 64;
constexpr int kLocalSteps = 10;

bool attack_open(BabContext& ctx, const BabProblem& p, const BoxStack& pool, const at::Tensor& rows) {
  if (rows.size(0) == 0) return false;
  at::Tensor worst = std::get<1>(pool.score(rows).topk(std::min(kLocalBoxes, rows.size(0)), 0, /*largest=*/false));
  at::Tensor wl = pool.xl(rows).index_select(0, worst), wu = pool.xu(rows).index_select(0, worst);
  return try_points(ctx, p, box_attack(ctx.net, wl, wu, (wl + wu) / 2, p.c, p.rhs, kLocalSteps));
}

void report(BabContext& ctx, int64_t left, int64_t visited, double lower) {
  if (ctx.progress) ctx.progress(Progress{ctx.phase, left, visited, lower, ctx.elapsed()});
}

/// Rows of the unverified boxes (xl, xu, score, smear, layer bounds) for the stack; the smear
/// of input i is |a_i| (u_i - l_i) for the best row's coefficients a (the width where all are zero).
at::Tensor open_rows(const Bounded& b, const at::Tensor& open, const at::Tensor& xl, const at::Tensor& xu) {
  at::Tensor ol = xl.index_select(0, open), ou = xu.index_select(0, open);
  at::Tensor a = b.a.index_select(0, open), rows = b.rows.index_select(0, open);
  at::Tensor ar = a.gather(1, rows.view({-1, 1, 1}).expand({a.size(0), 1, a.size(2)})).squeeze(1);
  at::Tensor smear = ar.abs() * (ou - ol);
  smear = at::where((std::get<0>(smear.max(1)) <= 0).unsqueeze(1), ou - ol, smear);
  std::vector<at::Tensor> parts{ol, ou, b.score.index_select(0, open).unsqueeze(1), smear};
  for (const at::Tensor& t : b.layers.lower) parts.push_back(t.index_select(0, open));
  for (const at::Tensor& t : b.layers.upper) parts.push_back(t.index_select(0, open));
  return at::cat(parts, 1);
}

/// Split choice guards (bench/RESULTS.md, 2026-11-30 session 7). The choice compares one
/// bisection per candidate, and CROWN's bound is not monotone in the box: on ACAS Xu 3_9
/// prop_1 the search sliced x0, x2, x3 down to relative widths 6e-5..4e-3 with x4 still whole
/// (bisecting them: -31.318 -> -31.308; bisecting the wide x1 once: -45, into four: -0.9, into
/// sixteen: proven). So dimensions thinner than kThinRatio times the box's widest (relative
/// to the root box) are no candidates, and when no candidate's worse child gains kStallRatio
/// of the box's |bound|, the relatively widest dimension is bisected (when a candidate).
/// Only in the five-candidate search (`guarded`): in the two-candidate one they decided 1_1
/// prop_3 and 3_3 prop_9 too but took 2_7 prop_1 from 1237 to 4471 domains.
constexpr double kThinRatio = 1.0 / 32, kStallRatio = 0.01;
/// A dimension narrower than this fraction of the root box's is a point (point_dimensions;
/// no candidate in either search): bisecting it makes two copies of the box. On 5_3 prop_2
/// the two-candidate search kept bisecting four such dimensions of one box (x2 the only wide
/// one, where the best row's coefficient was 0, so its smear was 0 too), copying the box.
constexpr double kPointWidth = 1e-9;
/// A dimension whose smear is below this fraction of the box's largest is no candidate in the
/// two-candidate search. On 1_1 prop_5 (session 9) its lowest box, bound -0.00746, was wide only
/// in x4 (smear 0.0296) and thin elsewhere (smear ~1e-5, four orders below). Bisecting x4 left
/// the worse child no better, while bisecting a thin dimension copied the box with its bound, so
/// the copy won each time. The box's copies kept the search's lower bound at -0.00746257 for
/// 900 s, although the true margin on that box is above 0.004.
constexpr double kNegligibleSmear = 1e-3;
/// Bytes of open boxes (both searches) beyond which input splitting gives up (`unknown`):
/// every open box keeps its hidden layers' bounds (ACAS Xu: 4.9 KB a box).
constexpr int64_t kMaxPoolBytes = int64_t{4} << 30;  // (a stack grows by doubling: up to 2x in memory)

/// The children of each box (bisected along one dimension; they cover the box) with their
/// bounds. The `candidates` dimensions with the largest smear |a_i| (u_i - l_i) are each
/// tried, and the one whose worse child has the best bound wins. Two and five (all of ACAS
/// Xu's) candidates were measured (bench/RESULTS.md, 2026-11-30): five decide 5_5, 2_8, 5_7
/// prop_1 (2.3-4.8 s) but lose instances two decide in 1.4-6.2 s (2_1, 2_2 prop_3, 1_1 prop_4,
/// 1_7 prop_2, 3_6, 4_3 prop_1: timeouts at 116 s): the layer bounds are not monotone in the
/// box (CROWN's adaptive slopes flip), and no single split choice is better on every instance.
/// Hence the portfolio of input_split_bab below.
std::tuple<at::Tensor, at::Tensor, Bounded> split_boxes(const ReluNet& net, const BabProblem& p, const at::Tensor& xl,
                                                        const at::Tensor& xu, const at::Tensor& smear,
                                                        const LayerBounds& parent_layers, int64_t candidates,
                                                        const at::Tensor& parent, bool guarded) {
  const int64_t bsz = xl.size(0), m = std::min<int64_t>(candidates, xl.size(1));
  at::Tensor root = (p.xu - p.xl).to(at::kDouble);
  at::Tensor thin = thin_dimensions(root, xl, xu, guarded ? kThinRatio : 0.0)  // [B, n]
                       .logical_or(point_dimensions(root, xl, xu, kPointWidth));
  if (!guarded) thin = thin.logical_or(negligible_smear(smear, kNegligibleSmear));
  at::Tensor dims = std::get<1>(smear.masked_fill(thin, -1).topk(m, 1));  // [B, m]: thin ones last
  std::vector<at::Tensor> ls, us;
  for (int64_t j = 0; j < m; ++j) {
    auto [cl, cu] = bisect(xl, xu, dims.select(1, j).contiguous());  // [2B, n]: lower halves, upper halves
    ls.push_back(cl), us.push_back(cu);
  }
  at::Tensor al = at::cat(ls), au = at::cat(us);  // child (j, side, box) at row (2 j + side) B + box
  LayerBounds inherited;  // child (j, side, box) lies inside box
  for (size_t k = 0; k < parent_layers.lower.size(); ++k) {
    inherited.lower.push_back(parent_layers.lower[k].repeat({2 * m, 1}));
    inherited.upper.push_back(parent_layers.upper[k].repeat({2 * m, 1}));
  }
  Bounded all = bound_boxes(net, al, au, p, &inherited);
  if (m == 1) return {al, au, all};
  at::Tensor worse = std::get<0>(all.score.reshape({m, 2, bsz}).min(1));  // [m, B]
  worse = worse.masked_fill(thin.gather(1, dims).t(), -std::numeric_limits<double>::infinity());
  auto [best_worse, best] = worse.max(0);                                  // [B]
  at::Tensor box = at::arange(bsz, at::kLong);
  if (guarded) {
    // no candidate improves the box's bound: bisect its relatively widest dimension instead
    at::Tensor stalled = best_worse <= parent + kStallRatio * parent.abs();
    at::Tensor is_widest = dims == relative_widths(root, xl, xu).argmax(1, /*keepdim=*/true);  // [B, m]
    best = at::where(stalled.logical_and(is_widest.any(1)), is_widest.to(at::kLong).argmax(1), best);
  }
  at::Tensor pick = at::cat({2 * best * bsz + box, (2 * best + 1) * bsz + box});  // lower halves, upper halves
  return {al.index_select(0, pick), au.index_select(0, pick), all.select(pick)};
}

/// One search of the portfolio: its own stack of open boxes (they cover what it has not
/// proven yet), split candidates, batch size, and the work spent in it.
struct Search {
  Search(int64_t n, const std::vector<int64_t>& widths, int64_t candidates, int64_t batch)
      : pool(n, widths), candidates(candidates), batch(batch) {}
  BoxStack pool;
  int64_t candidates, batch;
  int64_t it = 0;       // batches processed
  double cost = 0;      // work of its batches: children bounded / kChildrenPerSecond
  double handed = 0;    // the part of `cost` spent in hand-offs to ReLU splitting
  double bisected = 0;  // the part of `cost` spent in bisection in the portfolio phase
};

/// The portfolio: the search with two candidates runs alone until it has cost
/// `bab.input_portfolio_after` seconds (instances it decides by then keep exactly the search
/// of before); then a second search with five candidates starts from the root box and the two
/// share the time equally (the one that has cost less runs next) until either empties its
/// pool or finds a counterexample. Each pool covers the whole unproven region on its own, so
/// either finishing decides, and the better of their minima is a lower bound. With hand-offs
/// to ReLU splitting (`bab.input_relu_share` > 0) the five-candidate search replaces the
/// two-candidate one instead: the hand-offs did not prove the two-candidate search's boxes,
/// which it slices thin along a few inputs (session 10: 0 of 32 with 8 domains a box on 4_2
/// prop_2, sliced to 1/8192 of x1's range with x2 at 1/4), and with half the time the five-candidate
/// search decided neither 3_3 nor 4_2 prop_2 (bench/RESULTS.md, session 11). There the
/// sooner the portfolio starts the better, on the long instances: with 1 "second" instead of 5
/// (beside a build, load 3), 2_8, 4_7, 5_5, 5_6 prop_1 took 34.0, 33.8, 15.1, 17.9 s instead of
/// 66.6, 68.1, 52.1, 44.0 s, and 3_3 and 4_2 prop_2 90.3 and 111.3 s instead of timeouts; but
/// 5_3 prop_2's counterexample was lost and 3_7 prop_1 and 1_1 prop_3 came out slower.
constexpr int64_t kCandidates[2] = {2, 5};

/// A search measures its work in children bounded, not in seconds: the batch sizes, and so the
/// order of the search and the portfolio's shares, are then the same on any machine and at any
/// load. With the clock, 5_3 prop_2's counterexample (sat) was found in 4 of 7 runs in
/// session 8: under load the batches shrank and the search went deep elsewhere first. Counted
/// in children, it was found at every rate tried (2,000 to 8,000 children a "second", session 9).
/// One ACAS Xu child takes about 1/4,000 to 1/2,000 s here (one thread).
constexpr double kChildrenPerSecond = 4000;
/// A batch between kBatchWork[0] and kBatchWork[1] "seconds" of work; one that takes longer than
/// kMaxBatchSeconds on the clock is halved (a slow network or machine: the timeout is honoured
/// within a second).
constexpr double kBatchWork[2] = {0.05, 0.2}, kMaxBatchSeconds = 1.0;

enum class Step { Open, Proven, Falsified };

/// Hand-offs to ReLU splitting (relu_split_boxes), in the portfolio phase, by the
/// five-candidate search while its hand-offs have cost at most `bab.input_relu_share` times its
/// bisection work there: its kHandOffBoxes lowest-bounded open boxes go together, with a budget
/// of kHandOffDomains domains a box. A proven box leaves the pool; the others go back on top of
/// the stack and are bisected next.
/// Why (bench/RESULTS.md, sessions 10 and 11): on the open boxes of ACAS Xu 3_3 prop_2 after
/// 116 s, the triangle relaxation's LP with every layer's bounds tightened by LP is still below
/// 0 (-0.004 to -0.017) where the exact minimum is above (MILP, +0.001 to +0.005): bisection
/// must shrink the relaxation's slack below the margin, while splitting the few unstable
/// ReLUs removes it (one box that bisection had not proven in 60 s took 11 domains).
/// Measured on 3_3 and 4_2 prop_2 (session 11, 116 s, the two run together), which
/// bisection alone never decided: every box eligible, share 3, 32 domains a box: unsat in 46.1 s
/// and 44.1 s; 16 domains: 47.0 and 52.2 s; 8 domains: 73.5 s and open (-0.0039 at 115 s);
/// share 8 (8 domains): both open. Session 10's rule (boxes with at most 100 unstable ReLUs,
/// 8 domains, share 1, the two-candidate search still running) decided neither.
/// A ReLU-splitting domain counts as kReluDomainWork children bounded: about 5.5 ms a domain
/// in batches of 32 boxes (ACAS Xu, session 10).
constexpr int64_t kHandOffBoxes = 32, kHandOffDomains = 32;
constexpr double kReluDomainWork = 5;

/// In the portfolio phase every kBestFirstEvery-th batch of a search takes its pool's
/// lowest-bounded boxes instead of the top of its stack. The depth-first stack never returns
/// to the boxes at its bottom, where a counterexample may lie (5_3 prop_2:
/// the lower bound stayed at -0.067 for 110 s); the PGD of a batch then runs inside them.
/// A box's split and children hardly depend on when it is split (only through the batch's
/// padding of CROWN rows, which can tighten the IBP of the next layer), so a proof's tree stays
/// about the same in any order.
constexpr int64_t kBestFirstEvery = 4;

/// One batch of a search: pop, split, bound, try counterexamples, push the open children.
Step step(BabContext& ctx, const BabProblem& p, Search& s, BabOutcome& out, bool best_first) {
  const VerifyOptions& o = ctx.options;
  if (s.pool.size() == 0) return Step::Proven;
  auto t0 = Clock::now();
  at::Tensor todo = best_first && s.it % kBestFirstEvery == 0 ? s.pool.pop_lowest(s.batch) : s.pool.pop(s.batch);
  auto [cl, cu, b] = split_boxes(ctx.net, p, s.pool.xl(todo), s.pool.xu(todo), s.pool.smear(todo),
                                 s.pool.layers(todo), s.candidates, s.pool.score(todo), s.candidates > kCandidates[0]);
  alpha_near_verified(ctx, p, cl, cu, b);
  out.visited += cl.size(0);
  ++s.it;
  at::Tensor open = at::nonzero(b.score <= o.margin).reshape({-1});  // not verified yet
  at::Tensor rows = open_rows(b, open, cl, cu);
  at::Tensor vertex = minimising_vertex(b.a.index_select(0, open), b.rows.index_select(0, open),
                                        s.pool.xl(rows), s.pool.xu(rows));
  if (try_points(ctx, p, vertex)) return Step::Falsified;
  if (o.attack.enabled && attack_open(ctx, p, s.pool, rows)) return Step::Falsified;
  s.pool.push(rows);
  if (o.attack.enabled && o.bab.attack_every > 0 && s.it % o.bab.attack_every == 0 && attack_worst(ctx, p, s.pool, s.it))
    return Step::Falsified;
  const int64_t bounded = cl.size(0) * std::min<int64_t>(s.candidates, cl.size(1));  // 2 m children a box
  const double work = static_cast<double>(bounded) / kChildrenPerSecond;
  const double secs = ctx.agreed(std::chrono::duration<double>(Clock::now() - t0).count());
  if (!o.bab.force_synchronous) {
    if ((secs > kMaxBatchSeconds || work > kBatchWork[1]) && s.batch > 64) s.batch /= 2;
    else if (work < kBatchWork[0] && secs <= kMaxBatchSeconds && s.batch < 8192) s.batch *= 2;
  }
  s.cost += work;
  if (best_first) s.bisected += work;
  return s.pool.size() == 0 ? Step::Proven : Step::Open;
}

/// One hand-off of a search's lowest-bounded boxes.
Step hand_off(BabContext& ctx, const BabProblem& p, Search& s, BabOutcome& out) {
  if (s.pool.size() == 0) return Step::Proven;
  at::Tensor rows = s.pool.pop_lowest(kHandOffBoxes);
  BoxHandOff h = relu_split_boxes(ctx, p, s.pool.xl(rows), s.pool.xu(rows), s.pool.layers(rows),
                                 kHandOffDomains * rows.size(0));
  out.visited += h.visited;
  const double work = static_cast<double>(h.visited) * kReluDomainWork / kChildrenPerSecond;
  s.cost += work, s.handed += work;
  if (h.falsified) return Step::Falsified;
  s.pool.push(rows.index_select(0, at::nonzero(h.proven.logical_not()).reshape({-1})));
  return s.pool.size() == 0 ? Step::Proven : Step::Open;
}

}  // namespace

BabOutcome input_split_bab(BabContext& ctx, const BabProblem& p) {
  const VerifyOptions& o = ctx.options;
  const int64_t batch = o.bab.batch_size > 0 ? o.bab.batch_size : 256;
  BabOutcome out;
  at::Tensor xl = p.xl.to(at::kDouble).reshape({1, -1}), xu = p.xu.to(at::kDouble).reshape({1, -1});
  Bounded root = bound_boxes(ctx.net, xl, xu, p, nullptr);
  const std::vector<int64_t> widths = hidden_widths(ctx.net);
  // each open box keeps its layer bounds: 8 (3n + 1 + 2H) bytes; the pools stop at kMaxPoolBytes
  const int64_t row_bytes = 8 * (3 * xl.size(1) + 1 + 2 * std::accumulate(widths.begin(), widths.end(), int64_t{0}));
  const int64_t max_boxes = std::min<int64_t>(o.bab.max_domains, kMaxPoolBytes / row_bytes);
  out.visited = 1;
  out.lower = root.score.item<double>();
  if (out.lower > o.margin) return out.status = BabStatus::Proven, out;
  if (try_points(ctx, p, at::cat({minimising_vertex(root.a, root.rows, xl, xu), (xl + xu) / 2})))
    return out.status = BabStatus::Falsified, out;
  at::Tensor root_rows = open_rows(root, at::zeros({1}, at::kLong), xl, xu);
  std::vector<Search> searches;
  searches.reserve(2);
  searches.emplace_back(xl.size(1), widths, kCandidates[0], batch);
  searches.back().pool.push(root_rows);
  auto lower = [&] {
    double l = -std::numeric_limits<double>::infinity();
    for (const Search& s : searches) l = std::max(l, s.pool.min_score());
    return l;
  };
  auto open_boxes = [&] {
    int64_t k = 0;
    for (const Search& s : searches) k += s.pool.size();
    return k;
  };
  bool portfolio = false;  // the five-candidate search has started
  const bool hand_offs = o.bab.input_relu_share > 0;
  auto last_report = Clock::now();
  for (;;) {
    if (ctx.expired()) return out.lower = lower(), out.status = BabStatus::Timeout, out;
    if (open_boxes() > max_boxes) {
      out.lower = lower();
      out.reason = "more than " + std::to_string(max_boxes) + " sub-domains" +
                   (max_boxes < o.bab.max_domains ? " (" + std::to_string(kMaxPoolBytes >> 30) + " GiB of open boxes)" : "");
      return out.status = BabStatus::Exhausted, out;
    }
    if (!portfolio && o.bab.input_portfolio_after >= 0 && searches[0].cost >= o.bab.input_portfolio_after &&
        xl.size(1) > kCandidates[0]) {
      portfolio = true;
      const double spent = searches[0].cost;
      if (hand_offs) searches.clear();  // the five-candidate search with hand-offs runs alone
      searches.emplace_back(xl.size(1), widths, kCandidates[1], batch);
      searches.back().pool.push(root_rows);
      searches.back().cost = spent;  // from now on, equal shares
    }
    Search& s = searches.size() == 1 || searches[0].cost <= searches[1].cost ? searches[0] : searches[1];
    Step r = portfolio && hand_offs && s.candidates == kCandidates[1] && s.handed <= o.bab.input_relu_share * s.bisected
                 ? hand_off(ctx, p, s, out)
                 : step(ctx, p, s, out, portfolio);
    if (r == Step::Proven) return out.status = BabStatus::Proven, out;
    if (r == Step::Falsified) return out.status = BabStatus::Falsified, out;
    if (ctx.side_attack && ctx.side_attack()) return out.status = BabStatus::Falsified, out;  // not timed above
    if (Clock::now() - last_report > std::chrono::seconds(1)) {
      report(ctx, open_boxes(), out.visited, lower());
      last_report = Clock::now();
    }
  }
}

}  // namespace tessera::lirpa::detail
