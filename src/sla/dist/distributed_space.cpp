// Krylov and Lanczos spaces over the ranks: see distributed_space.h.

#include "sla/dist/distributed_space.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

namespace tessera::sla::detail {

KrylovSpace distributed_krylov_space(const DSparseTensor& a) { return distributed_krylov_space(a.comm(), a.rows()); }

KrylovSpace distributed_krylov_space(const std::shared_ptr<dist::Communicator>& comm, int64_t global_size) {
  KrylovSpace space;
  space.dot = [comm](const at::Tensor& u, const at::Tensor& v) {
    at::Tensor s = at::dot(u, v).to(at::kDouble).reshape({1}).contiguous();  // <u, v>_r
    comm->all_reduce(s, dist::ReduceOp::Sum);                                 // sum_r <u, v>_r
    return s.item<double>();
  };
  space.block_dot = [comm](const at::Tensor& v, const at::Tensor& w) {
    at::Tensor h = at::mv(v, w).contiguous();  // V_r^T w_r
    comm->all_reduce(h, dist::ReduceOp::Sum);
    return h;
  };
  space.any = [comm](bool flag) {
    at::Tensor f = at::full({1}, static_cast<int32_t>(flag), at::kInt);
    comm->all_reduce(f, dist::ReduceOp::Max);
    return f.item<int32_t>() != 0;
  };
  space.global_size = global_size;
  return space;
}

LanczosSpace distributed_lanczos_space(const DSparseTensor& a) {
  std::shared_ptr<dist::Communicator> comm = a.comm();
  LanczosSpace space;
  space.local_rows = a.owned_rows();
  space.inner = [comm](const at::Tensor& q, const at::Tensor& w) {
    at::Tensor h = at::mm(q, w).contiguous();  // Q_r W_r
    comm->all_reduce(h, dist::ReduceOp::Sum);  // sum_r Q_r W_r
    return h;
  };
  space.qr = [comm](const at::Tensor& w) {
    const int64_t rows = w.size(0), b = w.size(1);
    auto [q_local, r_local] = at::linalg_qr(w, "reduced");  // W_r = Q_r R_r
    if (rows < b) {
      // fewer rows than columns here: R_r is [rows, b]; pad to [b, b] (Q_r with zero columns)
      q_local = at::cat({q_local, at::zeros({rows, b - rows}, w.options())}, 1);
      r_local = at::cat({r_local, at::zeros({b - rows, b}, w.options())}, 0);
    }
    std::vector<int64_t> counts(comm->size(), b);
    at::Tensor stacked = comm->all_gather(r_local.contiguous(), counts);  // [R_0; ...; R_{P-1}]
    auto [q_stack, r] = at::linalg_qr(stacked, "reduced");               // [R_r] = Q' R, alike on every rank
    at::Tensor q = at::mm(q_local, q_stack.narrow(0, comm->rank() * b, b));  // Q = Q_r Q'_r
    return std::make_pair(q, r);
  };
  at::Tensor owned = a.plan().local_to_global.narrow(0, 0, a.owned_rows());
  space.local = [owned](const at::Tensor& full) { return full.index_select(0, owned); };
  return space;
}

}  // namespace tessera::sla::detail
