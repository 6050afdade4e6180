#pragma once
// Differentiable halo exchanges. The forward exchange copies owned values into the
// neighbours' halo slots; its transpose sends halo values back to their owners, which sum
// them into the owned entries. Each is the other's backward.

#include <ATen/core/Tensor.h>

#include <memory>

#include "tessera/dist/communicator.h"
#include "tessera/sla/dist/halo_plan.h"

namespace tessera::sla::detail {

/// halo [plan.halo, ...] = values of owned rows [plan.owned, ...] that neighbours own
/// for us. `pending` is an exchange already started on x_owned (to overlap interior
/// work); when null one is started here.
at::Tensor halo_forward(const std::shared_ptr<dist::Communicator>& comm,
                        const std::shared_ptr<const HaloPlan>& plan, const at::Tensor& x_owned,
                        std::unique_ptr<dist::PendingExchange> pending = nullptr);

/// owned [plan.owned, ...] = sum over neighbours of the halo contributions they hold for
/// our rows: the transpose of halo_forward.
at::Tensor halo_reverse(const std::shared_ptr<dist::Communicator>& comm,
                        const std::shared_ptr<const HaloPlan>& plan, const at::Tensor& halo);

/// The plan of the reverse direction, as a NeighbourPlan over the halo vector.
dist::NeighbourPlan reverse_plan(const HaloPlan& plan);

/// Plain (no autograd) versions on detached tensors.
at::Tensor halo_forward_raw(dist::Communicator& comm, const HaloPlan& plan, const at::Tensor& x_owned);
at::Tensor halo_reverse_raw(dist::Communicator& comm, const HaloPlan& plan, const at::Tensor& halo);

}  // namespace tessera::sla::detail
