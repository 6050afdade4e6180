#pragma once
// Every node's value at a batch of points, float64 (Graph::forward keeps only the output's):
// what the soundness checks compare intermediate bounds with.

#include <ATen/ATen.h>

#include <vector>

#include "tessera/lirpa/bound_op.h"
#include "tessera/lirpa/graph.h"

namespace tessera::lirpa::detail {

/// values[id]: node id's value at the points x [N, n_in], shaped [N, *node shape] (under the
/// caller's grad mode).
inline std::vector<at::Tensor> node_values(const Graph& g, const at::Tensor& x) {
  OpEnv env{g.params(), at::kDouble};
  std::vector<at::Tensor> v(g.nodes().size());
  std::vector<int64_t> s{x.size(0)};
  s.insert(s.end(), g.input_shape().begin(), g.input_shape().end());
  v[0] = x.to(at::kDouble).reshape(s);
  for (const Node& node : g.nodes()) {
    if (node.id == 0) continue;
    std::vector<at::Tensor> in;
    for (int i : node.inputs) in.push_back(v[i]);
    v[node.id] = node.op->forward(env, in);
  }
  return v;
}

}  // namespace tessera::lirpa::detail
