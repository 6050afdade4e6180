// Intermediate bounds handed between runs (BoundOptions::keep_intermediate and
// known_intermediate): what one run returns holds every sampled point's node values, is at
// least as tight as CROWN's, and a run given them bounds exactly as the run that computed them.
// The positions whose bounds a batch of domains needs: each domain its own, and its bounds
// the same whether its batch is bounded whole or in groups of similar counts.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "lirpa/bab/graph_bab.h"
#include "lirpa/bab/graph_beta.h"
#include "lirpa/propagation.h"
#include "graph_bab_cases.h"
#include "random_nets.h"
#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::lirpa {
namespace {

using testing::node_values;

std::vector<std::string> networks() {
  at::manual_seed(21);
  return {testing::random_cnn("MaxPool"), testing::random_conv_chain(), testing::random_residual(4),
          testing::random_mlp(6, {12, 12}, 3, "Sigmoid")};
}

TEST(LirpaIntermediateBounds, HoldSampledPointsAndAlphaTightensCrown) {
  for (const std::string& onnx : networks()) {
    Graph g = load_onnx_bytes(onnx);
    at::Tensor x0 = at::randn({g.input_size()}, at::kDouble) * 0.5;
    at::Tensor lo = x0 - 0.3, hi = x0 + 0.3;
    at::Tensor x = at::cat({lo + (hi - lo) * at::rand({3000, lo.numel()}, at::kDouble),
                            at::where(at::rand({300, lo.numel()}, at::kDouble) > 0.5, hi, lo)});
    std::vector<at::Tensor> v = node_values(g, x);
    BoundOptions o;
    o.keep_intermediate = true;
    BoundsResult crown = compute_bounds(g, lo, hi, o);
    o.method = Method::AlphaCrown;
    o.alpha.iterations = 5;
    BoundsResult alpha = compute_bounds(g, lo, hi, o);
    ASSERT_FALSE(crown.intermediate.empty());
    ASSERT_EQ(alpha.intermediate.size(), crown.intermediate.size());
    for (const auto& [p, b] : alpha.intermediate) {
      at::Tensor z = v[p].reshape({x.size(0), -1});
      at::Tensor l = b.lower.reshape({1, -1}), u = b.upper.reshape({1, -1});
      EXPECT_TRUE((z >= l - 1e-9).all().item<bool>()) << "node " << p << " lower bound violated";
      EXPECT_TRUE((z <= u + 1e-9).all().item<bool>()) << "node " << p << " upper bound violated";
      const Interval& c = crown.intermediate.at(p);
      EXPECT_TRUE((b.lower >= c.lower - 1e-12).all().item<bool>()) << "node " << p << ": looser than CROWN";
      EXPECT_TRUE((b.upper <= c.upper + 1e-12).all().item<bool>()) << "node " << p << ": looser than CROWN";
    }
  }
}

// The rows of an intermediate bound stay patches through convolutions, ReLUs and residual
// additions (a_matrix.h, patches_a.h): from every node, the identity as unit rows bounds
// exactly as the same identity given as dense rows, which every operator takes densely.
TEST(LirpaIntermediateBounds, PatchRowsBoundAsDenseRows) {
  at::manual_seed(22);
  for (const std::string& onnx : {testing::random_resnet(), testing::random_cnn("AveragePool"), testing::random_conv_chain()}) {
    Graph g = load_onnx_bytes(onnx);
    OpEnv env{g.params(), at::kDouble};
    at::Tensor x0 = at::randn({g.input_size()}, at::kDouble) * 0.5;
    detail::BoundState state(g.nodes().size());
    std::vector<int64_t> s{1};
    s.insert(s.end(), g.input_shape().begin(), g.input_shape().end());
    state.bounds[0] = Interval{(x0 - 0.3).reshape(s), (x0 + 0.3).reshape(s)};
    detail::crown_intermediate(g, state, env, g.output_id());
    int compared = 0;
    for (const Node& node : g.nodes()) {
      if (node.id == 0 || !state.bounds[node.id]) continue;
      APtr unit = UnitRowsA::identity(node.shape, true);
      at::Tensor by_patches = detail::crown_lower(g, state, env, node.id, unit, false);
      at::Tensor by_dense = detail::crown_lower(g, state, env, node.id, DenseA::make(unit->dense(at::kDouble)), false);
      EXPECT_TRUE(at::allclose(by_patches, by_dense, 1e-10, 1e-10))
          << node.name << ": " << (by_patches - by_dense).abs().max();
      ++compared;
    }
    EXPECT_GE(compared, 2);
  }
}

TEST(LirpaIntermediateBounds, GivenBoundsAreUsedAsTheyAre) {
  for (const std::string& onnx : networks()) {
    Graph g = load_onnx_bytes(onnx);
    at::Tensor x0 = at::randn({g.input_size()}, at::kDouble) * 0.5;
    at::Tensor lo = x0 - 0.3, hi = x0 + 0.3;
    BoundOptions o;
    o.keep_intermediate = true;
    BoundsResult first = compute_bounds(g, lo, hi, o);
    BoundOptions again = o;
    again.known_intermediate = &first.intermediate;
    BoundsResult second = compute_bounds(g, lo, hi, again);
    EXPECT_TRUE(at::equal(second.lower, first.lower));
    EXPECT_TRUE(at::equal(second.upper, first.upper));
    // looser given bounds (every interval widened) give looser output bounds: they are used
    std::map<int, Interval> wide;
    for (const auto& [p, b] : first.intermediate) wide[p] = Interval{b.lower - 1.0, b.upper + 1.0};
    again.known_intermediate = &wide;
    BoundsResult looser = compute_bounds(g, lo, hi, again);
    EXPECT_TRUE((looser.lower <= first.lower + 1e-12).all().item<bool>());
    EXPECT_TRUE((looser.lower < first.lower - 1e-9).any().item<bool>()) << "the given bounds were not used";
  }
}

TEST(LirpaIntermediateBounds, BoundsForANodeTheNetworkLacksAreRefused) {
  Graph g = load_onnx_bytes(testing::random_conv_chain());
  at::Tensor lo = at::zeros({g.input_size()}, at::kDouble), hi = lo + 0.1;
  std::map<int, Interval> bad{{static_cast<int>(g.nodes().size()) + 3, Interval{lo, hi}}};
  BoundOptions o;
  o.known_intermediate = &bad;
  EXPECT_THROW(compute_bounds(g, lo, hi, o), Error);
}

// Each domain of a batch bounds its own unstable positions (those first, ascending), padded
// to the largest count with positions it does not need; a domain with more than 90% of them
// unstable needs them all.
TEST(LirpaIntermediateBounds, EachDomainGetsItsOwnPositions) {
  at::manual_seed(3);
  Graph g = load_onnx_bytes(testing::random_mlp(4, {10, 10}, 2, "Relu"));
  std::vector<detail::GraphRelu> relus = detail::graph_relus(g);
  ASSERT_EQ(relus.size(), 2u);
  const detail::GraphRelu& r = relus[1];  // its input is not linear in the input box
  ASSERT_EQ(r.size, 10);
  // domain 0: positions 7 and 2 unstable; domain 1: 0, 4, 5, 9; domain 2: none
  at::Tensor l = at::ones({3, 10}, at::kDouble), u = 2 * at::ones({3, 10}, at::kDouble);
  for (auto [d, i] : std::vector<std::pair<int, int>>{{0, 7}, {0, 2}, {1, 0}, {1, 4}, {1, 5}, {1, 9}}) l[d][i] = -1.0;
  detail::NeededBounds n = detail::positions_needing_bounds(g, *g.node(r.node).op, r.input, Interval{l, u});
  ASSERT_EQ(n.per_domain(), 4);
  EXPECT_TRUE(at::equal(n.idx[0], at::tensor({2, 7, 0, 1}, at::kLong))) << n.idx[0];
  EXPECT_TRUE(at::equal(n.idx[1], at::tensor({0, 4, 5, 9}, at::kLong))) << n.idx[1];
  EXPECT_TRUE(at::equal(n.idx[2], at::tensor({0, 1, 2, 3}, at::kLong))) << n.idx[2];
  EXPECT_TRUE(at::equal(n.need.sum(1), at::tensor({2, 4, 0}, at::kLong)));
  EXPECT_TRUE(n.need[1].all().item<bool>() && n.need[0][0].item<bool>() && n.need[0][1].item<bool>());
  // one domain with every position unstable: all ten positions, for every domain
  l[2].fill_(-1.0);
  n = detail::positions_needing_bounds(g, *g.node(r.node).op, r.input, Interval{l, u});
  ASSERT_EQ(n.per_domain(), 10);
  EXPECT_TRUE(n.need[2].all().item<bool>());
  EXPECT_EQ(n.need[0].sum().item<int64_t>(), 2);
  // the first ReLU's input is linear in the input box: nothing to bound
  EXPECT_EQ(detail::positions_needing_bounds(g, *g.node(relus[0].node).op, relus[0].input, Interval{l, u})
                .per_domain(), 0);
}

// A batch of boxes where most need few CROWN rows and some need many is bounded in groups;
// every domain's bounds are those it gets alone (no padding of another domain's count).
// (padding_groups itself: bab_test.cpp.)
TEST(LirpaIntermediateBounds, GroupedDomainsGetTheBoundsTheyGetAlone) {
  at::manual_seed(17);
  Graph g = load_onnx_bytes(testing::random_mlp(5, {24, 24, 24}, 3, "Relu"));
  const int64_t small = 96, large = 32, domains = small + large, n = g.input_size();
  at::Tensor centre = at::rand({domains, n}, at::kDouble) * 2 - 1;
  at::Tensor radius = at::cat({at::full({small, 1}, 1e-3, at::kDouble), at::full({large, 1}, 0.8, at::kDouble)});
  at::Tensor xl = centre - radius, xu = centre + radius;
  OpEnv env{g.params(), at::kDouble};
  auto bound = [&](const at::Tensor& l, const at::Tensor& u) {
    detail::BoundState st(g.nodes().size());
    st.bounds[0] = Interval{l.reshape(detail::lead_shape(g, 0, l.size(0))), u.reshape(detail::lead_shape(g, 0, l.size(0)))};
    st.intersect_reference = true;
    detail::crown_intermediate(g, st, env, g.output_id());
    return st;
  };
  detail::BoundState all = bound(xl, xu);
  // the batch's padding is worth groups at some ReLU input: most domains need far fewer
  // positions than the widest
  bool grouped = false;
  for (const detail::GraphRelu& r : detail::graph_relus(g)) {
    const Interval& z = *all.bounds[r.input];
    at::Tensor count = (z.lower.reshape({domains, -1}) < 0).logical_and(z.upper.reshape({domains, -1}) > 0).sum(1);
    grouped = grouped || detail::padding_groups(count).size() > 1;
  }
  ASSERT_TRUE(grouped);
  for (int64_t d = 0; d < domains; d += 9) {
    detail::BoundState one = bound(xl.slice(0, d, d + 1), xu.slice(0, d, d + 1));
    for (const detail::GraphRelu& r : detail::graph_relus(g)) {
      const Interval& a = *all.bounds[r.input];
      const Interval& b = *one.bounds[r.input];
      EXPECT_TRUE(at::allclose(a.lower[d], b.lower[0], 1e-12, 1e-12)) << "domain " << d << " node " << r.input;
      EXPECT_TRUE(at::allclose(a.upper[d], b.upper[0], 1e-12, 1e-12)) << "domain " << d << " node " << r.input;
    }
  }
}

// With intersect_padding (input splitting's boxes), the CROWN bounds a batch computes at
// positions a domain does not need (its group's padding) are intersected too: never looser
// than without, tighter somewhere, and every sampled point of every box still inside.
TEST(LirpaIntermediateBounds, IntersectedPaddingTightensAndHoldsSampledPoints) {
  at::manual_seed(19);
  Graph g = load_onnx_bytes(testing::random_mlp(5, {24, 24, 24}, 3, "Relu"));
  const int64_t domains = 64, n = g.input_size();
  at::Tensor centre = at::rand({domains, n}, at::kDouble) * 2 - 1;
  at::Tensor radius = at::rand({domains, 1}, at::kDouble) * 0.8 + 0.05;  // counts that differ
  at::Tensor xl = centre - radius, xu = centre + radius;
  OpEnv env{g.params(), at::kDouble};
  auto bound = [&](bool padding) {
    detail::BoundState st(g.nodes().size());
    st.bounds[0] = Interval{xl.reshape(detail::lead_shape(g, 0, domains)), xu.reshape(detail::lead_shape(g, 0, domains))};
    st.intersect_reference = true;
    st.intersect_padding = padding;
    detail::crown_intermediate(g, st, env, g.output_id());
    return st;
  };
  detail::BoundState plain = bound(false), padded = bound(true);
  const int64_t per_box = 200;
  at::Tensor t = at::rand({domains, per_box, n}, at::kDouble);
  at::Tensor x = (xl.unsqueeze(1) + (xu - xl).unsqueeze(1) * t).reshape({domains * per_box, n});
  std::vector<at::Tensor> v = node_values(g, x);
  bool tighter = false;
  for (const detail::GraphRelu& r : detail::graph_relus(g)) {
    const Interval& a = *plain.bounds[r.input];
    const Interval& b = *padded.bounds[r.input];
    EXPECT_TRUE((b.lower >= a.lower).all().item<bool>()) << "node " << r.input;
    EXPECT_TRUE((b.upper <= a.upper).all().item<bool>()) << "node " << r.input;
    tighter = tighter || (b.lower > a.lower + 1e-9).any().item<bool>() || (b.upper < a.upper - 1e-9).any().item<bool>();
    at::Tensor z = v[r.input].reshape({domains, per_box, -1});
    at::Tensor l = b.lower.reshape({domains, 1, -1}), u = b.upper.reshape({domains, 1, -1});
    EXPECT_TRUE((z >= l - 1e-9).all().item<bool>()) << "node " << r.input << " lower bound";
    EXPECT_TRUE((z <= u + 1e-9).all().item<bool>()) << "node " << r.input << " upper bound";
  }
  EXPECT_TRUE(tighter) << "no padding position was tightened";
}

// A neuron that the domain's limits make stable (a split's side, a parent's bounds) gets no
// CROWN row: the limits are applied to the reference before the positions are picked. With
// every input of the last ReLU limited to z >= 0, those inputs keep the reference's upper
// bound (interval arithmetic, looser than CROWN's somewhere), and no bound is computed for them.
TEST(LirpaIntermediateBounds, PositionsTheLimitsMakeStableGetNoRows) {
  at::manual_seed(23);
  Graph g = load_onnx_bytes(testing::random_mlp(4, {16, 16, 16}, 2, "Relu"));
  const std::vector<detail::GraphRelu> relus = detail::graph_relus(g);
  const detail::GraphRelu& last = relus.back();
  at::Tensor xl = at::rand({1, g.input_size()}, at::kDouble) - 1, xu = xl + 1.0;
  OpEnv env{g.params(), at::kDouble};
  auto bound = [&](bool limited) {
    detail::BoundState st(g.nodes().size());
    st.bounds[0] = Interval{xl.reshape(detail::lead_shape(g, 0, 1)), xu.reshape(detail::lead_shape(g, 0, 1))};
    if (limited) {
      st.limits.resize(g.nodes().size());
      const auto shape = detail::lead_shape(g, last.input, 1);
      st.limits[last.input] = Interval{at::zeros(shape, at::kDouble), at::full(shape, 1e300, at::kDouble)};
    }
    detail::crown_intermediate(g, st, env, g.output_id());
    return *st.bounds[last.input];
  };
  Interval free = bound(false), lim = bound(true);
  at::Tensor crown_u = free.upper.reshape({-1}), kept_u = lim.upper.reshape({-1});
  EXPECT_TRUE((lim.lower.reshape({-1}) >= 0).all().item<bool>());
  // where CROWN bounded the free run's unstable inputs, the limited run kept the reference
  at::Tensor unstable = (free.lower.reshape({-1}) < 0).logical_and(crown_u > 0);
  ASSERT_TRUE(unstable.any().item<bool>());
  EXPECT_TRUE((kept_u >= crown_u - 1e-12).all().item<bool>());
  EXPECT_TRUE((kept_u.masked_select(unstable) > crown_u.masked_select(unstable) + 1e-9).any().item<bool>())
      << "the limited inputs were bounded by CROWN rows";
}

// One box's CROWN passes take 256 rows of a CNN's wide nodes at a time (a batch of domains
// takes 2,048): on the VNN-COMP 2022 CIFAR ResNet the run's peak stays near a third of the
// 2,048-row passes' 140.9 MB (54.9 MB measured; bench/RESULTS.md, "bounds").
TEST(LirpaIntermediateBounds, OneBoxPassesOfAResNetKeepItsPeakLow) {
  const std::string dir = std::string(TESSERA_SHARED_DATA) + "/vnncomp2022/sri_resnet_a/";
  Graph g = load_onnx(dir + "resnet_3b2_bn_mixup_adv_4.0_bs128_lr-1.onnx");
  Property p = load_vnnlib(dir + "cifar10_spec_idx_4711_eps_0.00350.vnnlib");
  core::MemoryLedger::install();
  core::MemoryLedger::reset_peak();
  const int64_t before = core::MemoryLedger::current_bytes();
  BoundOptions o;
  o.method = Method::Crown;
  BoundsResult r = compute_bounds(g, p.cases[0].lower, p.cases[0].upper, o);
  EXPECT_TRUE(at::all(r.lower <= r.upper).item<bool>());
  EXPECT_LT(core::MemoryLedger::peak_bytes() - before, int64_t{80} << 20);
}

}  // namespace
}  // namespace tessera::lirpa
