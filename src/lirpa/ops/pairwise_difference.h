#pragma once
// The differences of every pair of entries along the last axis (pairwise_difference.cpp),
// the first step of Softmax's composition (composite.cpp).

#include <memory>

#include "tessera/lirpa/bound_op.h"

namespace tessera::lirpa::detail {

/// d[..., i, j] = x[..., j] - x[..., i] for x [..., T] (d: [..., T, T]).
std::shared_ptr<const BoundOp> make_pairwise_difference();

}  // namespace tessera::lirpa::detail
