#pragma once
/// @file differentiable.h
/// Collectives that carry gradients across ranks.
///
/// The total loss of a distributed computation is the sum of the ranks' losses, so the
/// backward of a collective is its transpose:
///   - all_gather (concatenate every rank's rows)  -> backward: reduce-scatter (sum) of
///     the gradient, each rank keeping the rows it contributed;
///   - all_reduce_sum                               -> backward: all-reduce (sum) of the
///     gradient;
///   - replicate (a copy on every rank)             -> backward: all-reduce (sum) of the
///     gradient.
///
/// @code
///   at::Tensor full = tessera::dist::differentiable::all_gather(comm, shard);
///   at::Tensor loss = (full * full).sum();
///   loss.backward();   // shard.grad() = sum over ranks of d loss_r / d shard
/// @endcode
///
/// The communicator must outlive the backward pass; every rank must call backward.

#include <ATen/core/Tensor.h>

#include <memory>

namespace tessera::dist {
class Communicator;

namespace differentiable {

/// Rows of every rank's `x`, concatenated in rank order (row counts may differ).
at::Tensor all_gather(const std::shared_ptr<Communicator>& comm, const at::Tensor& x);

/// Element-wise sum of every rank's `x`.
at::Tensor all_reduce_sum(const std::shared_ptr<Communicator>& comm, const at::Tensor& x);

/// A copy of `x`, a value every rank holds alike, for this rank's own part of a computation
/// (its attention heads): the gradient of `x` is the sum of every rank's (an all-reduce).
at::Tensor replicate(const std::shared_ptr<Communicator>& comm, const at::Tensor& x);

}  // namespace differentiable
}  // namespace tessera::dist
