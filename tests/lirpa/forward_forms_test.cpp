// Forward linear bounds over the input box (BoundOp::forward_forms): every node's lower and
// upper forms, evaluated at sampled points, hold the node's value there; and as the reference
// of the intermediate bounds they leave fewer ReLU inputs unstable than interval arithmetic.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "lirpa/propagation.h"
#include "tessera/lirpa/param_store.h"
#include "random_nets.h"

namespace tessera::lirpa {
namespace {

using testing::node_values;

/// Networks whose every operator has forms (Gemm, Relu, Add, Sub, Mul by a constant,
/// Reshape), and one whose forms stop at its first Conv (after the input's normalisation).
std::vector<std::pair<std::string, bool>> networks() {
  at::manual_seed(8);
  return {{testing::random_mlp(5, {20, 20, 20}, 4, "Relu"), true},
          {testing::random_residual(6), true},
          {testing::random_conv_chain(), false}};
}

TEST(LirpaForwardForms, EveryNodesFormsHoldSampledValues) {
  for (const auto& [onnx, whole] : networks()) {
    Graph g = load_onnx_bytes(onnx);
    OpEnv env{g.params(), at::kDouble};
    const int64_t n = g.input_size();
    at::Tensor x0 = at::randn({n}, at::kDouble) * 0.5, lo = x0 - 0.4, hi = x0 + 0.4;
    detail::BoundState state(g.nodes().size());
    std::vector<int64_t> s{1};
    s.insert(s.end(), g.input_shape().begin(), g.input_shape().end());
    state.bounds[0] = Interval{lo.reshape(s), hi.reshape(s)};
    detail::crown_intermediate(g, state, env, g.output_id());  // bounds of every ReLU input
    std::vector<std::optional<LinearForms>> forms(g.nodes().size());
    forms[0] = detail::input_forms(*state.bounds[0]);
    at::Tensor e = at::rand({4000, n}, at::kDouble) * 2 - 1;
    e = at::cat({e, at::where(at::rand({400, n}, at::kDouble) > 0.5, 1.0, -1.0)});  // and vertices
    at::Tensor x = (lo + hi) / 2 + (hi - lo) / 2 * e;
    std::vector<at::Tensor> v = node_values(g, x);
    int with_forms = 0, first_conv = static_cast<int>(g.nodes().size());
    for (const Node& node : g.nodes())
      if (node.op && node.op->type() == "Conv") first_conv = std::min(first_conv, node.id);
    for (const Node& node : g.nodes()) {
      if (node.id == 0) continue;
      forms[node.id] = detail::node_forms(g, forms, state.bounds, env, node.id);
      if (!forms[node.id]) continue;
      if (node.id >= first_conv) ADD_FAILURE() << "forms after a Conv: " << node.name << " " << node.op->type();
      ++with_forms;
      const LinearForms& f = *forms[node.id];
      auto eval = [&](const at::Tensor& t) {  // t [1, n + 1, *shape] at every sampled e: [N, numel]
        at::Tensor flat = t.reshape({n + 1, -1});
        return at::matmul(e, flat.narrow(0, 0, n)) + flat[n];
      };
      at::Tensor z = v[node.id].reshape({x.size(0), -1});
      EXPECT_TRUE((eval(f.lower) <= z + 1e-9).all().item<bool>()) << "node " << node.name << ": lower form above the value";
      EXPECT_TRUE((eval(f.upper) >= z - 1e-9).all().item<bool>()) << "node " << node.name << ": upper form below the value";
      Interval c = detail::concretise(f);
      EXPECT_TRUE((z >= c.lower.reshape({1, -1}) - 1e-9).all().item<bool>()) << "node " << node.name;
      EXPECT_TRUE((z <= c.upper.reshape({1, -1}) + 1e-9).all().item<bool>()) << "node " << node.name;
    }
    if (whole) EXPECT_EQ(with_forms, static_cast<int>(g.nodes().size()) - 1);
    else EXPECT_LT(with_forms, first_conv);  // none from the first Conv on
  }
}

// As the reference of the intermediate bounds (BoundState::forward_forms) they keep every
// bound sound and leave fewer ReLU inputs crossing zero than interval arithmetic does.
TEST(LirpaForwardForms, AsTheReferenceTheyAreSoundAndTighterThanIntervals) {
  at::manual_seed(9);
  Graph g = load_onnx_bytes(testing::random_mlp(4, {24, 24, 24, 24}, 3, "Relu"));
  OpEnv env{g.params(), at::kDouble};
  const int64_t n = g.input_size(), domains = 6;
  at::Tensor centre = at::randn({domains, n}, at::kDouble) * 0.5, r = at::rand({domains, n}, at::kDouble) * 0.3 + 0.05;
  at::Tensor x = centre.unsqueeze(1) + r.unsqueeze(1) * (at::rand({domains, 2000, n}, at::kDouble) * 2 - 1);
  std::vector<at::Tensor> v = node_values(g, x.reshape({-1, n}));
  int64_t unstable[2] = {0, 0};
  for (bool with_forms : {false, true}) {
    detail::BoundState state(g.nodes().size());
    state.forward_forms = with_forms;
    state.intersect_reference = true;
    std::vector<int64_t> s{domains};
    s.insert(s.end(), g.input_shape().begin(), g.input_shape().end());
    state.bounds[0] = Interval{(centre - r).reshape(s), (centre + r).reshape(s)};
    detail::crown_intermediate(g, state, env, g.output_id());
    for (const Node& node : g.nodes()) {
      if (node.id == 0 || !node.op->needs_input_bounds()) continue;
      Interval b = *state.bounds[node.inputs[0]];
      at::Tensor z = v[node.inputs[0]].reshape({domains, 2000, -1});
      b = Interval{b.lower.reshape({domains, -1}), b.upper.reshape({domains, -1})};
      EXPECT_TRUE((z >= b.lower.unsqueeze(1) - 1e-9).all().item<bool>()) << "forms " << with_forms;
      EXPECT_TRUE((z <= b.upper.unsqueeze(1) + 1e-9).all().item<bool>()) << "forms " << with_forms;
      unstable[with_forms] += (b.lower < 0).logical_and(b.upper > 0).sum().item<int64_t>();
    }
  }
  EXPECT_LE(unstable[1], unstable[0]);
  EXPECT_GT(unstable[0], 0);
}

/// An identity whose forms fail as ATen fails on shapes it cannot broadcast.
class FormsFail final : public BoundOp {
 public:
  std::string type() const override { return "FormsFail"; }
  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override { return x[0]; }
  Interval ibp(const OpEnv&, const std::vector<Interval>& x) const override { return x[0]; }
  Backward backward(const OpEnv&, const APtr& a, const BackwardContext&) const override { return {{a}, {}}; }
  std::optional<LinearForms> forward_forms(const OpEnv&, const std::vector<LinearForms>& x,
                                           const std::vector<Interval>&) const override {
    return LinearForms{x[0].lower + at::zeros({3, 1, 1, 7}, x[0].lower.options()), x[0].upper};  // throws
  }
};

// An operator whose forms fail on its shapes gives none (the nodes after it keep interval
// bounds) instead of ending the bound computation.
TEST(LirpaForwardForms, FormsThatFailOnTheShapesAreLeftOut) {
  Graph g(std::make_shared<LocalParamStore>());
  g.add_input("x", {1, 3});
  g.set_output(g.add_node("fail", std::make_shared<FormsFail>(), {0}));
  OpEnv env{g.params(), at::kDouble};
  std::vector<std::optional<LinearForms>> forms(g.nodes().size());
  forms[0] = detail::input_forms(Interval{at::zeros({2, 1, 3}, at::kDouble), at::ones({2, 1, 3}, at::kDouble)});
  std::vector<std::optional<Interval>> bounds(g.nodes().size());
  EXPECT_FALSE(detail::node_forms(g, forms, bounds, env, 1).has_value());
}

}  // namespace
}  // namespace tessera::lirpa
