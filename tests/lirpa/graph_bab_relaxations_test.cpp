// Graph branch and bound on networks with relaxations other than ReLU's (products of two
// variables): the domains take the problem box's intermediate bounds of every node as limits
// (GraphDomains::root_limits), beta's optimisation moves the products' plane mixes too, and
// the parameters start from given ones (GraphDomains::alpha_start).
// Each bound is checked against sampled points; each gain is one the change makes (without
// it the comparisons below are equal).

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "lirpa/bab/graph_bab.h"
#include "random_nets.h"
#include "tessera/lirpa/bounds.h"
#include "tessera/lirpa/model_io.h"
#include "tessera/lirpa/onnx_builder.h"

namespace tessera::lirpa {
namespace {

using detail::GraphBounded;
using detail::GraphDomains;
using detail::GraphRelu;

// x [1, 4] -> h = relu(x W0 + b0) [8] -> a = h W1, c = h W2 [6] -> z = a * c -> y = z W3 [3]
// (with_relu: the hidden ReLU; without it, h = x W0 + b0 and the product is the only
// relaxation).
std::string product_net(bool with_relu) {
  at::manual_seed(21);
  OnnxBuilder b("x", {1, 4});
  auto h = b.node("Gemm", {b.input(), b.constant("w0", at::randn({4, 8}, at::kDouble)),
                           b.constant("b0", at::randn({8}, at::kDouble) * 0.5)});
  if (with_relu) h = b.node("Relu", {h});
  auto a = b.node("MatMul", {h, b.constant("w1", at::randn({8, 6}, at::kDouble) * 0.5)});
  auto c = b.node("MatMul", {h, b.constant("w2", at::randn({8, 6}, at::kDouble) * 0.5)});
  b.set_output(b.node("MatMul", {b.node("Mul", {a, c}), b.constant("w3", at::randn({6, 3}, at::kDouble))}));
  return b.bytes();
}

struct Problem {
  Graph g;
  std::vector<GraphRelu> relus;
  at::Tensor lo, hi, c, rhs, sampled_min;  // sampled_min: min over samples of c y - rhs, per row
};

Problem problem(bool with_relu) {
  Problem p{load_onnx_bytes(product_net(with_relu)), {}, {}, {}, {}, {}, {}};
  p.relus = detail::graph_relus(p.g);
  at::Tensor center = at::tensor({0.3, -0.2, 0.1, 0.4}, at::kDouble);
  p.lo = center - 0.4, p.hi = center + 0.4;
  p.c = at::tensor({1.0, -1.0, 0.0, 0.0, 1.0, -1.0}, at::kDouble).reshape({2, 3});
  at::manual_seed(22);
  at::Tensor x = p.lo + (p.hi - p.lo) * at::rand({20000, 4}, at::kDouble);
  at::Tensor g = at::matmul(p.g.forward(x.reshape({-1, 1, 4}), at::kDouble).reshape({-1, 3}), p.c.t());  // [N, 2]
  p.sampled_min = std::get<0>(g.min(0));
  p.rhs = p.sampled_min - 0.01;  // open near the sampled minimum: the bounds stay below it
  p.sampled_min = p.sampled_min - p.rhs;
  return p;
}

GraphDomains root(const Problem& p) {
  GraphDomains d;
  d.xl = p.lo.reshape({1, -1});
  d.xu = p.hi.reshape({1, -1});
  for (const GraphRelu& r : p.relus) d.split.push_back(at::zeros({1, r.size}, at::kChar));
  return d;
}

void expect_below_samples(const at::Tensor& lb, const Problem& p, const char* what) {
  EXPECT_TRUE((lb.reshape({-1}) <= p.sampled_min + 1e-9).all().item<bool>())
      << what << ": lower bounds " << lb << " above the sampled minima " << p.sampled_min;
}

// beta's optimisation on a domain moves the products' plane mixes: on a network whose only
// relaxation is a product, it gains over CROWN (before, with no ReLU slope or multiplier to
// move, it returned CROWN's bound).
TEST(LirpaGraphBabRelaxations, BetaStepsMoveTheProductsPlaneMixes) {
  Problem p = problem(false);
  ASSERT_TRUE(p.relus.empty());
  GraphDomains d = root(p);
  at::Tensor crown = detail::bound_graph_domains(p.g, p.relus, d, p.c, p.rhs).lb;
  BetaOptions beta;
  at::Tensor opt = detail::bound_graph_domains(p.g, p.relus, d, p.c, p.rhs, nullptr, &beta).lb;
  expect_below_samples(crown, p, "CROWN");
  expect_below_samples(opt, p, "beta's optimisation");
  EXPECT_TRUE((opt >= crown - 1e-12).all().item<bool>()) << "optimised " << opt << "\nCROWN " << crown;
  EXPECT_GT((opt - crown).sum().item<double>(), 1e-3) << "optimised " << opt << "\nCROWN " << crown;
}

// The domains' parameters start from given ones (the incomplete stage's best,
// GraphDomains::alpha_start): one beta step from alpha-CROWN's final parameters is as good as
// alpha-CROWN's bound, where one step from CROWN's is about CROWN's.
TEST(LirpaGraphBabRelaxations, DomainsStartFromTheGivenParameters) {
  Problem p = problem(false);
  BoundOptions o;
  o.method = Method::AlphaCrown;
  o.dtype = at::kDouble;
  o.want_upper = false;
  o.intersect_ibp = true;
  o.alpha.intermediate = false;  // the final rows' parameters only, as beta's steps
  o.alpha.iterations = 60;
  BoundsResult r = compute_bounds(p.g, p.lo, p.hi, o, p.c);
  ASSERT_FALSE(r.final_alpha.empty());
  const int64_t k = p.c.size(0);
  std::map<int, at::Tensor> rows;
  for (const auto& [node, t] : r.final_alpha) rows[node] = t.narrow(0, 0, k);  // the lower side's rows
  at::Tensor alpha_lb = r.lower.reshape({1, k}) - p.rhs;
  GraphDomains cold = root(p), warm = root(p);
  warm.alpha_start = std::make_shared<const std::map<int, at::Tensor>>(rows);
  BetaOptions one;
  one.iterations = 1;
  at::Tensor from_crown = detail::bound_graph_domains(p.g, p.relus, cold, p.c, p.rhs, nullptr, &one).lb;
  at::Tensor from_given = detail::bound_graph_domains(p.g, p.relus, warm, p.c, p.rhs, nullptr, &one).lb;
  expect_below_samples(from_given, p, "from the given parameters");
  EXPECT_TRUE((from_given >= alpha_lb - 1e-6).all().item<bool>()) << "from given " << from_given << "\nalpha-CROWN " << alpha_lb;
  EXPECT_GT((from_given - from_crown).sum().item<double>(), 1e-3) << "from given " << from_given << "\nfrom CROWN's " << from_crown;
}

// The problem box's intermediate bounds from alpha-CROWN (tighter than CROWN's on the
// product's inputs, behind the ReLU) limit every domain: the root's bound gains, a split
// child stays sound.
TEST(LirpaGraphBabRelaxations, DomainsTakeTheBoxsIntermediateBoundsAsLimits) {
  Problem p = problem(true);
  ASSERT_EQ(p.relus.size(), 1u);
  BoundOptions o;
  o.method = Method::AlphaCrown;
  o.dtype = at::kDouble;
  o.keep_intermediate = true;
  o.intersect_ibp = true;
  o.alpha.iterations = 30;
  BoundsResult r = compute_bounds(p.g, p.lo, p.hi, o, p.c);
  ASSERT_FALSE(r.intermediate.empty());
  GraphDomains plain = root(p), limited = root(p);
  limited.root_limits = std::make_shared<const std::map<int, Interval>>(r.intermediate);
  GraphBounded without = detail::bound_graph_domains(p.g, p.relus, plain, p.c, p.rhs);
  GraphBounded with = detail::bound_graph_domains(p.g, p.relus, limited, p.c, p.rhs);
  expect_below_samples(without.lb, p, "root");
  expect_below_samples(with.lb, p, "root with the box's bounds");
  EXPECT_GT((with.lb - without.lb).sum().item<double>(), 1e-3) << "with " << with.lb << "\nwithout " << without.lb;
  // a child of each side of an unstable neuron, limited as well: sound on its samples
  at::Tensor unstable = at::nonzero((with.bounds.lower[0][0] < 0).logical_and(with.bounds.upper[0][0] > 0)).reshape({-1});
  ASSERT_GT(unstable.numel(), 0);
  const int64_t i = unstable[0].item<int64_t>();
  GraphDomains kids = limited;
  kids.split = {at::zeros({2, p.relus[0].size}, at::kChar)};
  kids.split[0][0][i] = 1;
  kids.split[0][1][i] = -1;
  BetaOptions beta;
  GraphBounded gk = detail::bound_graph_domains(p.g, p.relus, kids, p.c, p.rhs, nullptr, &beta);
  at::manual_seed(23);
  at::Tensor x = p.lo + (p.hi - p.lo) * at::rand({20000, 4}, at::kDouble);
  at::Tensor pre = testing::node_values(p.g, x)[p.relus[0].input].reshape({x.size(0), -1});  // the ReLU's input
  at::Tensor y = at::matmul(p.g.forward(x.reshape({-1, 1, 4}), at::kDouble).reshape({-1, 3}), p.c.t()) - p.rhs;
  for (int64_t b = 0; b < 2; ++b) {
    at::Tensor in = b == 0 ? pre.select(1, i) >= 0 : pre.select(1, i) <= 0;
    at::Tensor ys = y.index_select(0, at::nonzero(in).reshape({-1}));
    ASSERT_GT(ys.size(0), 0);
    EXPECT_TRUE((ys >= gk.lb[b].unsqueeze(0) - 1e-9).all().item<bool>()) << "child " << b << " lb " << gk.lb[b];
  }
}

}  // namespace
}  // namespace tessera::lirpa
