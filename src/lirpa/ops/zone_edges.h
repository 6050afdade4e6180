#pragma once
// The two edges of a tensor-parallel zone (tensor parallelism by heads, zone_pass.h). Between
// them each rank holds its share of the values: the columns of its attention heads (or of
// its block of an MLP's hidden layer) after a column-parallel Linear, up to the row-parallel
// Linear whose partial products the sum edge adds up.
//   enter:  y = x on every rank (x whole);  the backward of rows shared by every rank sums
//           the ranks' A matrices (each holds its heads' part of A_x)
//   sum:    y = sum_r x_r;  IBP [sum_r l_r, sum_r u_r];  backward: A_x_r = A_y on every rank

#include <memory>

#include "tessera/lirpa/bound_op.h"

namespace tessera::lirpa::detail {

std::shared_ptr<const BoundOp> make_zone_enter(std::shared_ptr<dist::Communicator> comm, int zone);
std::shared_ptr<const BoundOp> make_zone_sum(std::shared_ptr<dist::Communicator> comm, int zone);

/// sum_r t_r over the ranks of `comm` (a collective; a new tensor, `t` left alone).
at::Tensor sum_over_ranks(dist::Communicator& comm, const at::Tensor& t);

}  // namespace tessera::lirpa::detail
