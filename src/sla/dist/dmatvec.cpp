// Distributed products: y = A x with the halo exchange overlapping the interior block,
// and y = A^T x with halo contributions returned to their owners.

#include <ATen/ATen.h>

#include "sla/dist/autograd/halo_exchange.h"
#include "tessera/core/error.h"
#include "tessera/sla/dist/dsparse_tensor.h"

namespace tessera::sla {
namespace {

void check_owned(const at::Tensor& x, int64_t owned, const char* op) {
  TESSERA_CHECK(x.defined() && (x.dim() == 1 || x.dim() == 2), InvalidInput, op,
                ": x must be [owned] or [owned, k]");
  TESSERA_CHECK(x.size(0) == owned, DimensionMismatch, op, ": this rank owns ", owned,
                " rows but x has ", x.size(0));
}

}  // namespace

at::Tensor DSparseTensor::matvec(const at::Tensor& x_owned) const {
  check_owned(x_owned, plan_->owned, "distributed matvec");
  // start sending owned values to the neighbours' halos
  auto pending = comm_->start_neighbour_exchange(x_owned.detach().contiguous(), plan_->exchange);
  // y = A_int x_owned while the messages travel
  at::Tensor y = sla::matvec(interior_, x_owned);
  // y += A_ext x_halo once they arrived
  at::Tensor halo = detail::halo_forward(comm_, plan_, x_owned, std::move(pending));
  return y + sla::matvec(exterior_, halo);
}

at::Tensor DSparseTensor::rmatvec(const at::Tensor& x_owned) const {
  check_owned(x_owned, plan_->owned, "distributed rmatvec");
  // (A^T x)_owned = A_int^T x + sum over peers of their A_ext^T x for our rows
  at::Tensor halo_part = sla::rmatvec(exterior_, x_owned);
  return sla::rmatvec(interior_, x_owned) + detail::halo_reverse(comm_, plan_, halo_part);
}

}  // namespace tessera::sla
