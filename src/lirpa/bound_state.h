#pragma once
// BoundState: everything one bound computation produces and consumes, keyed by node id
// (intermediate bounds, optimisable slopes). Operators never hold any of it.

#include <ATen/core/Tensor.h>

#include <map>
#include <optional>
#include <vector>

#include "tessera/lirpa/bound_op.h"

namespace tessera::lirpa::detail {

struct BoundState {
  explicit BoundState(size_t nodes) : bounds(nodes) {}
  /// Bounds of each node's value, `[1, *shape]`, where computed.
  std::vector<std::optional<Interval>> bounds;
  /// alpha-CROWN slopes keyed by (start node of the backward pass, activation node), for
  /// the rows bounded from that start node, `[S, *shape]`.
  std::map<std::pair<int, int>, at::Tensor> alpha;
};

}  // namespace tessera::lirpa::detail
