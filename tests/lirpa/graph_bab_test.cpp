// ReLU-splitting branch and bound on the graph engine (graph_relu_split.cpp): every bounded
// domain of small search trees on random CNNs and ResNets holds the forward passes of the
// sampled points that satisfy its splits (a ReLU inside a residual block included), and
// verdicts on properties whose answer is known.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "lirpa/bab/graph_bab.h"
#include "lirpa/bab/relu_bab.h"
#include "graph_bab_cases.h"
#include "graph_domains.h"
#include "random_nets.h"
#include "tessera/lirpa/verify.h"

namespace tessera::lirpa {
namespace {

using detail::GraphBounded;
using detail::GraphDomains;
using detail::GraphRelu;
using testing::node_values;
using testing::sample;
using testing::Samples;
using testing::satisfying;
using testing::random_children;
using testing::root_children;
using testing::Case;
using testing::cases;
using testing::Problem;
using testing::problem;
using testing::random_resnet;
using testing::root_domain;
using testing::spec_rows;

/// Checks every domain of `d` (bounded as `gb`) against the samples satisfying its splits:
/// pre-activation bounds and lower bounds of c y - rhs. Returns the points checked.
int64_t expect_sound(const std::vector<GraphRelu>& relus, const GraphDomains& d, const GraphBounded& gb,
                     const Samples& s, const at::Tensor& c, const at::Tensor& rhs, double tol = 1e-8) {
  int64_t checked = 0;
  at::Tensor g = at::matmul(s.y, c.t()) - rhs;  // [N, K]
  for (int64_t b = 0; b < d.size(); ++b) {
    at::Tensor idx = satisfying(relus, d, b, s);
    if (gb.bounds.infeasible[b].item<bool>()) {
      EXPECT_EQ(idx.numel(), 0) << "domain " << b << " called infeasible but holds sampled points";
      continue;
    }
    for (size_t j = 0; j < relus.size(); ++j) {
      at::Tensor z = s.z[j].index_select(0, idx);
      at::Tensor l = gb.bounds.lower[j][b].unsqueeze(0), u = gb.bounds.upper[j][b].unsqueeze(0);
      EXPECT_TRUE((z >= l - tol).all().item<bool>()) << "domain " << b << " ReLU node " << j << " lower bound";
      EXPECT_TRUE((z <= u + tol).all().item<bool>()) << "domain " << b << " ReLU node " << j << " upper bound";
    }
    at::Tensor gs = g.index_select(0, idx);
    EXPECT_TRUE((gs >= gb.lb[b].unsqueeze(0) - tol).all().item<bool>())
        << "domain " << b << " lb " << gb.lb[b] << " min sampled " << std::get<0>(gs.min(0));
    checked += idx.numel();
  }
  return checked;
}

/// A small search tree as graph_relu_split_bab grows it: the root, then `levels` rounds of
/// BaBSR splits of every domain, children inheriting their parent's bounds (the
/// pre-activations' and, as a floor, the rows'); every bounded
/// domain checked against the samples. Returns the points checked over all domains.
int64_t check_tree(const Graph& g, const at::Tensor& lo, const at::Tensor& hi, const at::Tensor& c,
                   const at::Tensor& rhs, int levels, bool alpha_root) {
  auto relus = detail::graph_relus(g);
  Samples s = sample(g, relus, lo, hi, 4000);
  GraphDomains d = root_domain(lo, hi, relus);
  AlphaOptions ao;
  ao.iterations = 5;
  GraphBounded gb = detail::bound_graph_domains(g, relus, d, c, rhs, alpha_root ? &ao : nullptr);
  EXPECT_EQ(gb.bounded, 1);
  int64_t checked = expect_sound(relus, d, gb, s, c, rhs);
  for (int level = 0; level < levels; ++level) {
    auto [rows, score] = detail::best_rows(gb.lb);
    auto [layer, neuron] = detail::babsr_choice(gb.bounds, gb.lambda, d.split, rows);
    at::Tensor ok = at::nonzero(layer >= 0).reshape({-1});
    if (ok.numel() == 0) break;
    GraphDomains kids;
    kids.xl = lo;
    kids.xu = hi;
    std::vector<at::Tensor> split;
    for (size_t j = 0; j < relus.size(); ++j) {
      split.push_back(d.split[j].index_select(0, ok));
      kids.lower.push_back(gb.bounds.lower[j].index_select(0, ok).repeat({2, 1}));
      kids.upper.push_back(gb.bounds.upper[j].index_select(0, ok).repeat({2, 1}));
    }
    layer = layer.index_select(0, ok), neuron = neuron.index_select(0, ok);
    kids.split = detail::split_children(split, layer, neuron);
    kids.reuse_upto = layer.repeat({2});
    kids.lb_floor = gb.lb.index_select(0, ok).repeat({2, 1});  // the parents' bounds, as the search keeps them
    BetaOptions beta;  // split multipliers on the children, as the search bounds them
    gb = detail::bound_graph_domains(g, relus, kids, c, rhs, nullptr, &beta);
    EXPECT_EQ(gb.bounded, kids.size());
    EXPECT_TRUE((gb.lb >= kids.lb_floor).all().item<bool>()) << "a child's bound below its parent's";
    for (int64_t b = 0; b < kids.size(); ++b) {  // the new split is clamped
      int64_t j = kids.reuse_upto[b].item<int64_t>(), i = neuron[b % layer.size(0)].item<int64_t>();
      if (gb.bounds.infeasible[b].item<bool>()) continue;
      if (b < layer.size(0)) {
        EXPECT_GE(gb.bounds.lower[j][b][i].item<double>(), 0.0);
      } else {
        EXPECT_LE(gb.bounds.upper[j][b][i].item<double>(), 0.0);
      }
    }
    checked += expect_sound(relus, kids, gb, s, c, rhs);
    d = std::move(kids);
  }
  return checked;
}

TEST(LirpaGraphBab, FindsReluNodesByType) {
  at::manual_seed(1);
  Graph g = load_onnx_bytes(random_resnet());
  auto relus = detail::graph_relus(g);
  ASSERT_EQ(relus.size(), 3u);
  for (const GraphRelu& r : relus) {
    EXPECT_EQ(g.node(r.node).op->type(), "Relu");
    EXPECT_EQ(r.size, 3 * 36);
    EXPECT_EQ(g.node(r.node).inputs.at(0), r.input);
  }
}

TEST(LirpaGraphBab, SearchTreeDomainsHoldSampledPoints) {
  for (const Case& cs : cases()) {
    SCOPED_TRACE(cs.name);
    auto [g, relus, lo, hi, c, rhs] = problem(cs, 3);
    int64_t checked = check_tree(g, lo, hi, c, rhs, 3, true);
    EXPECT_GT(checked, 4000) << "too few sampled points satisfy the domains' splits to check anything";
  }
}

TEST(LirpaGraphBab, RandomSplitsWithoutInheritedBoundsHoldSampledPoints) {
  at::manual_seed(3);
  for (const Case& cs : cases()) {
    SCOPED_TRACE(cs.name);
    Graph g = load_onnx_bytes(cs.onnx);
    auto relus = detail::graph_relus(g);
    at::Tensor x0 = at::randn({g.input_size()}, at::kDouble) * 0.5;
    at::Tensor lo = x0 - cs.eps, hi = x0 + cs.eps;
    Samples s = sample(g, relus, lo, hi, 4000);
    // 6 domains, each with 1 to 3 splits on neurons whose sampled values take both signs
    GraphDomains d;
    d.xl = lo;
    d.xu = hi;
    const int64_t domains = 6;
    for (const GraphRelu& r : relus) d.split.push_back(at::zeros({domains, r.size}, at::kChar));
    for (int64_t b = 0; b < domains; ++b) {
      for (int k = 0; k <= b % 3; ++k) {
        int64_t j = at::randint(static_cast<int64_t>(relus.size()), {1}, at::kLong).item<int64_t>();
        at::Tensor both = at::nonzero((s.z[j] > 0).any(0).logical_and((s.z[j] < 0).any(0))).reshape({-1});
        if (both.numel() == 0) continue;
        int64_t i = both[at::randint(both.numel(), {1}, at::kLong).item<int64_t>()].item<int64_t>();
        d.split[j][b][i] = (b + k) % 2 == 0 ? 1 : -1;
      }
    }
    at::Tensor c = spec_rows(3, g.output_size());
    at::Tensor rhs = at::zeros({c.size(0)}, at::kDouble);
    GraphBounded gb = detail::bound_graph_domains(g, relus, d, c, rhs);
    EXPECT_GT(expect_sound(relus, d, gb, s, c, rhs), 200);
    AlphaOptions ao;  // alpha-CROWN under the same limits
    ao.iterations = 5;
    GraphBounded ga = detail::bound_graph_domains(g, relus, d, c, rhs, &ao);
    expect_sound(relus, d, ga, s, c, rhs);
    EXPECT_TRUE((ga.lb >= gb.lb - 1e-9).all().item<bool>()) << "alpha looser than CROWN";
    BetaOptions bo;  // split multipliers under the same limits
    GraphBounded gbeta = detail::bound_graph_domains(g, relus, d, c, rhs, nullptr, &bo);
    expect_sound(relus, d, gbeta, s, c, rhs);
    EXPECT_TRUE((gbeta.lb >= gb.lb - 1e-9).all().item<bool>()) << "beta looser than CROWN";
  }
}

/// Domain b of `d` alone.
GraphDomains one_domain(const GraphDomains& d, int64_t b) {
  GraphDomains one;
  one.xl = d.xl;
  one.xu = d.xu;
  at::Tensor sel = at::full({1}, b, at::kLong);
  for (const at::Tensor& t : d.split) one.split.push_back(t.index_select(0, sel));
  for (const at::Tensor& t : d.lower) one.lower.push_back(t.index_select(0, sel));
  for (const at::Tensor& t : d.upper) one.upper.push_back(t.index_select(0, sel));
  if (d.reuse_upto.defined()) one.reuse_upto = d.reuse_upto.index_select(0, sel);
  return one;
}

void expect_close(const at::Tensor& got, const at::Tensor& want, const std::string& what) {
  at::Tensor finite = at::isfinite(want);
  EXPECT_TRUE(at::equal(at::isfinite(got), finite)) << what;
  at::Tensor g = at::where(finite, got, at::zeros_like(got)), w = at::where(finite, want, at::zeros_like(want));
  EXPECT_TRUE(at::allclose(g, w, 1e-9, 1e-9)) << what << ": " << (g - w).abs().max();
}

// The domains of a batch are bounded together (one state, D domains): each must get the
// bounds it gets alone, children that reuse their parent's bounds up to different ReLU nodes
// (bounded in separate groups) and infeasible ones included.
TEST(LirpaGraphBab, DomainsBoundedTogetherEqualEachAlone) {
  at::manual_seed(5);
  for (const Case& cs : cases()) {
    SCOPED_TRACE(cs.name);
    auto [g, relus, lo, hi, c, rhs] = problem(cs, 3);
    GraphDomains root = root_domain(lo, hi, relus);
    GraphBounded gr = detail::bound_graph_domains(g, relus, root, c, rhs);
    const int64_t n = 8;
    GraphDomains kids = random_children(gr, relus, lo, hi, n);
    // one child made infeasible: its neuron split active with an upper bound below zero
    kids.upper[0][n - 1].fill_(-1.0);
    kids.split[0][n - 1][0] = 1;
    kids.reuse_upto[n - 1] = 0;
    GraphBounded together = detail::bound_graph_domains(g, relus, kids, c, rhs);
    ASSERT_EQ(together.bounded, n);
    EXPECT_TRUE(together.bounds.infeasible[n - 1].item<bool>());
    for (int64_t b = 0; b < n; ++b) {
      SCOPED_TRACE("domain " + std::to_string(b));
      GraphBounded alone = detail::bound_graph_domains(g, relus, one_domain(kids, b), c, rhs);
      EXPECT_EQ(together.bounds.infeasible[b].item<bool>(), alone.bounds.infeasible[0].item<bool>());
      expect_close(together.lb[b], alone.lb[0], "lb");
      expect_close(together.a_input[b], alone.a_input[0], "a_input");
      for (size_t j = 0; j < relus.size(); ++j) {
        expect_close(together.bounds.lower[j][b], alone.bounds.lower[j][0], "lower");
        expect_close(together.bounds.upper[j][b], alone.bounds.upper[j][0], "upper");
        expect_close(together.lambda[j][b], alone.lambda[j][0], "lambda");
      }
    }
  }
}

// A domain is empty only where a split's side contradicts its bounds: inherited bounds that
// cross the computed ones at a neuron without a split (rounding, in a real search: both are
// sound on the domain) leave the domain searched; a split against its bounds empties it.
TEST(LirpaGraphBab, OnlyASplitAgainstItsBoundsEmptiesADomain) {
  at::manual_seed(9);
  const std::vector<Case> all = cases();
  const Case& cs = all.front();
  auto [g, relus, lo, hi, c, rhs] = problem(cs, 3);
  GraphDomains root = root_domain(lo, hi, relus);
  GraphBounded gr = detail::bound_graph_domains(g, relus, root, c, rhs);
  GraphDomains kids = random_children(gr, relus, lo, hi, 2);
  for (size_t j = 0; j < relus.size(); ++j) kids.split[j].zero_();
  kids.reuse_upto.fill_(-1);  // every bound recomputed, the inherited ones as limits
  // child 0: the last ReLU input's first neuron inherits a lower bound above anything reachable
  const size_t last = relus.size() - 1;
  kids.lower[last][0][0] = gr.bounds.upper[last][0][0].item<double>() + 1.0;
  // child 1: the same crossing, with that neuron split inactive (z <= 0) against it
  kids.lower[last][1][0] = std::max(gr.bounds.upper[last][0][0].item<double>(), 0.0) + 1.0;
  kids.split[last][1][0] = -1;
  GraphBounded b = detail::bound_graph_domains(g, relus, kids, c, rhs);
  EXPECT_FALSE(b.bounds.infeasible[0].item<bool>());
  EXPECT_TRUE(at::isfinite(b.lb[0]).all().item<bool>()) << b.lb[0];
  EXPECT_TRUE(b.bounds.infeasible[1].item<bool>());
}

// Beta optimises the final rows' slopes with the split multipliers: over a batch of children
// the bounds are tighter than with the slopes held at CROWN's (lr_alpha 0), and still sound
// (the sampled-point tests above bound with the same options).
TEST(LirpaGraphBab, BetaWithTheSlopesIsTighterThanBetaAlone) {
  at::manual_seed(5);
  for (const Case& cs : cases()) {
    SCOPED_TRACE(cs.name);
    auto [g, relus, lo, hi, c, rhs] = problem(cs, 3);
    GraphDomains kids = root_children(g, relus, lo, hi, c, rhs, 8);
    BetaOptions with_slopes, frozen;
    frozen.lr_alpha = 0;
    at::Tensor a = detail::bound_graph_domains(g, relus, kids, c, rhs, nullptr, &with_slopes).lb;
    at::Tensor b = detail::bound_graph_domains(g, relus, kids, c, rhs, nullptr, &frozen).lb;
    at::Tensor open = at::isfinite(a).logical_and(at::isfinite(b));
    EXPECT_GT((a - b).masked_select(open).sum().item<double>(), 0.0) << "a " << a << "\nb " << b;
  }
}

// A child starts from its parent's slopes and multipliers: the parameters returned with the
// bounds are those of each row's last step, so one step from them gives that step's bound
// again (`lb_recorded`, or CROWN's where it is higher), not each row's best (from CROWN's
// slopes and zero multipliers, one step gives about CROWN's).
TEST(LirpaGraphBab, ReturnedParametersReproduceTheLastStepsBound) {
  at::manual_seed(6);
  for (const Case& cs : cases()) {
    SCOPED_TRACE(cs.name);
    auto [g, relus, lo, hi, c, rhs] = problem(cs, 3);
    GraphDomains kids = root_children(g, relus, lo, hi, c, rhs, 8);
    BetaOptions full, one;
    one.iterations = 1;
    GraphBounded opt = detail::bound_graph_domains(g, relus, kids, c, rhs, nullptr, &full);
    GraphBounded cold = detail::bound_graph_domains(g, relus, kids, c, rhs, nullptr, &one);
    GraphBounded crown = detail::bound_graph_domains(g, relus, kids, c, rhs);
    kids.start = opt.params;
    GraphBounded warm = detail::bound_graph_domains(g, relus, kids, c, rhs, nullptr, &one);
    // the domains still open at the end (a domain verified on the way leaves the optimisation
    // at that step; its recorded pass stays CROWN's)
    at::Tensor open = at::isfinite(opt.lb).logical_and((opt.lb.amax(1, true) <= 0).expand_as(opt.lb));
    at::Tensor a = opt.lb.masked_select(open), w = warm.lb.masked_select(open), k = cold.lb.masked_select(open);
    at::Tensor last = at::max(opt.lb_recorded, crown.lb).masked_select(open);
    EXPECT_TRUE(at::allclose(w, last, 1e-9, 1e-9)) << "last step " << last << "\nwarm start " << w;
    EXPECT_TRUE((last <= a + 1e-12).all().item<bool>());
    EXPECT_GT((a - k).sum().item<double>(), 0.0) << "the optimisation gained nothing: the test shows nothing";
  }
}

// Beta's steps run in float32 (BetaOptions::float32_steps), and the bound kept for each
// domain is a float64 pass's at the parameters they reached (or CROWN's where higher), never
// a float32 step's: one float64 step from the returned parameters gives every bound again.
// The float32 steps' bounds are within 1% of the float64 steps' (which keep each row's best
// step, not its last).
TEST(LirpaGraphBab, Float32StepsKeepOnlyFloat64Bounds) {
  at::manual_seed(7);
  for (const Case& cs : cases()) {
    SCOPED_TRACE(cs.name);
    auto [g, relus, lo, hi, c, rhs] = problem(cs, 3);
    GraphDomains kids = root_children(g, relus, lo, hi, c, rhs, 8);
    BetaOptions f32, f64, check;
    f64.float32_steps = false;
    check.float32_steps = false;
    check.iterations = 1;
    GraphBounded a = detail::bound_graph_domains(g, relus, kids, c, rhs, nullptr, &f32);
    GraphBounded b = detail::bound_graph_domains(g, relus, kids, c, rhs, nullptr, &f64);
    kids.start = a.params;
    GraphBounded again = detail::bound_graph_domains(g, relus, kids, c, rhs, nullptr, &check);
    at::Tensor fin = at::isfinite(a.lb);
    ASSERT_TRUE(fin.any().item<bool>());
    EXPECT_TRUE(at::equal(fin, at::isfinite(again.lb)));
    at::Tensor x = a.lb.masked_select(fin), y = again.lb.masked_select(fin), z = b.lb.masked_select(fin);
    EXPECT_TRUE(at::allclose(x, y, 1e-12, 1e-12)) << "kept " << x << "\nfloat64 pass " << y;
    EXPECT_GT((x - z + 1e-2 * (1 + z.abs())).min().item<double>(), 0.0) << x << "\n" << z;
  }
}

// FSB measures its candidates: the neuron it picks is unstable and unsplit in its domain, its
// worse child is at least as good as that of BaBSR's first choice (one of the candidates);
// with one candidate it is BaBSR, with every candidate the best of all measured one by one,
// with nothing left to split no choice, and none either once `stop` says so.
TEST(LirpaGraphBab, FsbChoiceIsAtLeastBabsrsFirstCandidate) {
  at::manual_seed(9);
  for (const Case& cs : cases()) {
    SCOPED_TRACE(cs.name);
    auto [g, relus, lo, hi, c, rhs] = problem(cs, 3);
    GraphDomains d = root_domain(lo, hi, relus);
    GraphBounded gb = detail::bound_graph_domains(g, relus, d, c, rhs);
    auto [rows, score] = detail::best_rows(gb.lb);
    auto [fl, fn] = detail::graph_fsb_choice(g, relus, d, gb, rows, c, rhs, 4);
    auto [bl, bn] = detail::babsr_choice(gb.bounds, gb.lambda, d.split, rows);
    if (bl[0].item<int64_t>() < 0) continue;  // nothing unstable
    const int64_t j = fl[0].item<int64_t>(), i = fn[0].item<int64_t>();
    ASSERT_GE(j, 0);
    EXPECT_LT(gb.bounds.lower[j][0][i].item<double>(), 0.0);
    EXPECT_GT(gb.bounds.upper[j][0][i].item<double>(), 0.0);
    // the worse child of a choice, both children bounded with the parent's layer bounds
    auto worse_child = [&](const at::Tensor& layer, const at::Tensor& neuron) {
      GraphDomains kids;
      kids.xl = lo;
      kids.xu = hi;
      kids.split = detail::split_children(d.split, layer, neuron);
      for (size_t h = 0; h < relus.size(); ++h) {
        kids.lower.push_back(gb.bounds.lower[h].repeat({2, 1}));
        kids.upper.push_back(gb.bounds.upper[h].repeat({2, 1}));
      }
      kids.reuse_upto = at::full({2}, static_cast<int64_t>(relus.size()) - 1, at::kLong);
      return std::get<0>(detail::bound_graph_domains(g, relus, kids, c, rhs).lb.max(1)).min().item<double>();
    };
    EXPECT_GE(worse_child(fl, fn), worse_child(bl, bn) - 1e-9);
    // `stop` is asked before each candidate's batch: no choice once it says so
    int asked = 0;
    auto [ls, ns] = detail::graph_fsb_choice(g, relus, d, gb, rows, c, rhs, 4, [&asked] { return ++asked > 1; });
    EXPECT_FALSE(ls.defined() || ns.defined());
    EXPECT_EQ(asked, 2);
    auto [lg, ng] = detail::graph_fsb_choice(g, relus, d, gb, rows, c, rhs, 4, [] { return false; });
    EXPECT_TRUE(at::equal(lg, fl) && at::equal(ng, fn));
    // with one candidate it is BaBSR's choice
    auto [l1, n1] = detail::graph_fsb_choice(g, relus, d, gb, rows, c, rhs, 1);
    EXPECT_TRUE(at::equal(l1, bl) && at::equal(n1, bn));
    // with every unstable neuron a candidate, the best worse child of all, each measured alone
    std::vector<std::pair<int64_t, int64_t>> unstable;
    for (size_t h = 0; h < relus.size(); ++h) {
      at::Tensor idx = at::nonzero((gb.bounds.lower[h][0] < 0).logical_and(gb.bounds.upper[h][0] > 0)).reshape({-1});
      for (int64_t q = 0; q < idx.numel(); ++q) unstable.emplace_back(static_cast<int64_t>(h), idx[q].item<int64_t>());
    }
    if (unstable.size() <= 40) {
      auto [la, na] = detail::graph_fsb_choice(g, relus, d, gb, rows, c, rhs, static_cast<int>(unstable.size()));
      double best = -std::numeric_limits<double>::infinity();
      for (auto [h, n] : unstable)
        best = std::max(best, worse_child(at::full({1}, h, at::kLong), at::full({1}, n, at::kLong)));
      EXPECT_NEAR(worse_child(la, na), best, 1e-9);
    }
    // nothing unstable and unsplit left: no choice
    GraphDomains all = d;
    for (at::Tensor& sp : all.split) sp = at::ones_like(sp);
    auto [l0, n0] = detail::graph_fsb_choice(g, relus, all, gb, rows, c, rhs, 4);
    EXPECT_EQ(l0[0].item<int64_t>(), -1);
    EXPECT_EQ(n0[0].item<int64_t>(), -1);
  }
}

TEST(LirpaGraphBab, SplitInsideResidualBlockHoldsSampledPoints) {
  at::manual_seed(7);
  Graph g = load_onnx_bytes(random_resnet());
  auto relus = detail::graph_relus(g);
  at::Tensor x0 = at::randn({g.input_size()}, at::kDouble) * 0.5;
  at::Tensor lo = x0 - 0.3, hi = x0 + 0.3;
  Samples s = sample(g, relus, lo, hi, 8000);
  // the ReLU inside the residual block (r1): the neuron whose sampled signs are most balanced
  const size_t j = 1;
  at::Tensor frac = (s.z[j] > 0).to(at::kDouble).mean(0);
  int64_t i = (frac - 0.5).abs().argmin().item<int64_t>();
  ASSERT_GT(frac[i].item<double>(), 0.05);
  ASSERT_LT(frac[i].item<double>(), 0.95);
  at::Tensor c = spec_rows(3, g.output_size());
  at::Tensor rhs = at::zeros({c.size(0)}, at::kDouble);
  GraphDomains root = root_domain(lo, hi, relus);
  GraphBounded gr = detail::bound_graph_domains(g, relus, root, c, rhs);
  GraphDomains kids;
  kids.xl = lo;
  kids.xu = hi;
  for (size_t k = 0; k < relus.size(); ++k) {
    kids.split.push_back(at::zeros({2, relus[k].size}, at::kChar));
    kids.lower.push_back(gr.bounds.lower[k].repeat({2, 1}));
    kids.upper.push_back(gr.bounds.upper[k].repeat({2, 1}));
  }
  kids.split[j][0][i] = 1;
  kids.split[j][1][i] = -1;
  kids.reuse_upto = at::full({2}, static_cast<int64_t>(j), at::kLong);
  GraphBounded gb = detail::bound_graph_domains(g, relus, kids, c, rhs);
  EXPECT_GE(gb.bounds.lower[j][0][i].item<double>(), 0.0);
  EXPECT_LE(gb.bounds.upper[j][1][i].item<double>(), 0.0);
  EXPECT_GT(expect_sound(relus, kids, gb, s, c, rhs), 4000);
  // the split reaches the layers after it: r2's bounds (after the residual Add) move in some child
  at::Tensor moved = (gb.bounds.lower[2] > gr.bounds.lower[2] + 1e-9).any().logical_or(
      (gb.bounds.upper[2] < gr.bounds.upper[2] - 1e-9).any());
  EXPECT_TRUE(moved.item<bool>()) << "the split did not tighten the bounds after the residual Add";
}

// graph_relu_split_bab on a problem with a confirmation that checks c y <= rhs in the box.
struct Search {
  detail::BabOutcome out;
  at::Tensor x;  // the confirmed counterexample, if any
};

Search search(const Graph& g, const at::Tensor& lo, const at::Tensor& hi, const at::Tensor& c, const at::Tensor& rhs,
              VerifyOptions o) {
  detail::RunClock clock(o.timeout);
  Search s;
  detail::GraphBabContext ctx{g, o, clock,
                              [&](const at::Tensor& x) {
                                at::Tensor y = g.forward(x.reshape({1, -1}), at::kDouble).reshape({-1});
                                bool in = (x >= lo).all().item<bool>() && (x <= hi).all().item<bool>();
                                if (!in || !(at::matmul(c, y) <= rhs).all().item<bool>()) return false;
                                s.x = x.clone();
                                return true;
                              },
                              {}, "bab-relu", {}};
  s.out = detail::graph_relu_split_bab(ctx, detail::BabProblem{lo, hi, c, rhs});
  return s;
}

// lower bound of c_0 y by CROWN over the box (intersected with IBP, as the search's root),
// and its sampled minimum
std::pair<double, double> gap(const Graph& g, const at::Tensor& lo, const at::Tensor& hi, const at::Tensor& c) {
  BoundOptions bo;
  bo.method = Method::Crown;
  bo.intersect_ibp = true;
  double lb = compute_bounds(g, lo, hi, bo, c).lower[0].item<double>();
  at::Tensor x = lo + (hi - lo) * at::rand({20000, lo.numel()}, at::kDouble);
  double m = at::matmul(g.forward(x, at::kDouble), c.t()).min().item<double>();
  return {lb, m};
}

TEST(LirpaGraphBab, CnnVerdictsKnownByConstruction) {
  at::manual_seed(21);
  Graph g = load_onnx_bytes(testing::random_cnn("MaxPool"));
  at::Tensor x0 = at::randn({g.input_size()}, at::kDouble) * 0.5;
  at::Tensor lo = x0 - 0.3, hi = x0 + 0.3;
  at::Tensor c = spec_rows(1, g.output_size());  // y_0
  auto [lb, m] = gap(g, lo, hi, c);
  ASSERT_LT(lb, m);
  VerifyOptions o;
  o.timeout = 30;
  o.attack.enabled = false;
  {  // unsat by a large margin: proven at the root
    Search s = search(g, lo, hi, c, at::full({1}, lb - 100, at::kDouble), o);
    EXPECT_EQ(s.out.status, detail::BabStatus::Proven);
    EXPECT_EQ(s.out.visited, 1);
  }
  {  // sat: a sampled point reaches below rhs; the search's PGD must find one
    VerifyOptions oa = o;
    oa.attack.enabled = true;
    oa.bab.attack_every = 1;
    double rhs = m + 0.05 * std::abs(m - lb);
    Search s = search(g, lo, hi, c, at::full({1}, rhs, at::kDouble), oa);
    ASSERT_EQ(s.out.status, detail::BabStatus::Falsified);
    ASSERT_TRUE(s.x.defined());
    at::Tensor y = g.forward(s.x.reshape({1, -1}), at::kDouble).reshape({-1});
    EXPECT_LE(at::matmul(c, y).item<double>(), rhs);
  }
}

TEST(LirpaGraphBab, BranchingClosesTheGapOnCnnAndResNet) {
  at::manual_seed(5);
  for (const Case& cs : cases()) {
    SCOPED_TRACE(cs.name);
    Graph g = load_onnx_bytes(cs.onnx);
    at::Tensor x0 = at::randn({g.input_size()}, at::kDouble) * 0.5;
    at::Tensor lo = x0 - cs.eps, hi = x0 + cs.eps;
    at::Tensor c = spec_rows(1, g.output_size());
    VerifyOptions o;
    o.timeout = 20;
    o.attack.enabled = false;
    o.alpha_enabled = false;
    // the search's root: CROWN with the final rows' slopes optimised
    const std::vector<GraphRelu> relus = detail::graph_relus(g);
    double lb = detail::bound_graph_domains(g, relus, testing::root_domain(lo, hi, relus), c, at::zeros({1}, at::kDouble),
                                            nullptr, &o.beta)
                    .lb.item<double>();
    double m = gap(g, lo, hi, c).second;
    ASSERT_LT(lb, m);
    // a twentieth of the way from the root's bound to the sampled minimum: the root cannot
    // prove it (its bound is below rhs), a few splits do, with either branching rule
    double rhs = lb + 0.05 * (m - lb);
    for (ReluBranching b : {ReluBranching::BaBSR, ReluBranching::FSB}) {
      SCOPED_TRACE(relu_branching_name(b));
      o.bab.branching = b;
      Search s = search(g, lo, hi, c, at::full({1}, rhs, at::kDouble), o);
      EXPECT_TRUE(s.out.status == detail::BabStatus::Proven || s.out.status == detail::BabStatus::Falsified)
          << "status " << static_cast<int>(s.out.status) << " " << s.out.reason << " after " << s.out.visited;
      EXPECT_GT(s.out.visited, 1) << "CROWN alone decided it: the test does not exercise branching";
      if (s.out.status == detail::BabStatus::Falsified) EXPECT_TRUE(s.x.defined());
    }
  }
}

}  // namespace
}  // namespace tessera::lirpa
