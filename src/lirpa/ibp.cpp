// Interval bound propagation: every node's bounds from its inputs' bounds, in order.

#include <ATen/ATen.h>

#include "propagation.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

void ibp_all(const Graph& graph, BoundState& state, const OpEnv& env) {
  TESSERA_CHECK(state.bounds[0].has_value(), InvalidInput, "IBP needs the input bounds");
  for (const Node& node : graph.nodes()) {
    if (node.id == 0 || state.bounds[node.id]) continue;
    std::vector<Interval> in;
    for (int i : node.inputs) in.push_back(*state.bounds[i]);
    state.bounds[node.id] = without_nan(node.op->ibp(env, in));
    if (node.id == graph.output_id()) break;
  }
}

}  // namespace tessera::lirpa::detail
