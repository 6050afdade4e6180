// The deflated adjoint solve of an eigenvector gradient (eigsh and deigsh backward).

#include "sla/autograd/eigenvector_adjoint.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "tessera/core/error.h"

namespace tessera::sla::detail {

at::Tensor eigenvector_adjoint(const LinearOperator& av, const at::Tensor& lambda, const at::Tensor& vectors,
                               int64_t i, const at::Tensor& g, const KrylovSpace& space) {
  const double li = lambda[i].item<double>();
  const double scale = std::max(1.0, lambda.abs().max().item<double>());
  if (lambda.size(0) > 1) {
    at::Tensor others = at::cat({lambda.narrow(0, 0, i), lambda.narrow(0, i + 1, lambda.size(0) - i - 1)});
    const double gap = (others - li).abs().min().item<double>();
    TESSERA_CHECK(gap > 1e-8 * scale, Unsupported, "eigsh backward: eigenvalue ", li, " is within ", gap,
                  " of another computed eigenvalue; the eigenvector gradient of a (near-)multiple eigenvalue is "
                  "not defined");
  }
  at::Tensor v = vectors.select(1, i).contiguous();
  const double c = scale;
  LinearOperator shifted = [&](const at::Tensor& w) {
    return av(w) - li * w + c * v * space.dot(v, w);   // (A - λ I + c v v^T) w
  };
  at::Tensor rhs = g - v * space.dot(v, g);            // (I - v v^T) g
  SolveOptions opts;
  opts.method = Method::MINRES;
  opts.preconditioner = Preconditioner::None;
  opts.rtol = 1e-13;
  SolveInfo info;
  at::Tensor w = krylov_solve(shifted, at::ones_like(v), rhs, opts, info, &space);
  TESSERA_CHECK(info.status == SolveStatus::Converged || info.residual < 1e-9, Unsupported,
                "eigsh backward: the eigenvector solve for λ = ", li, " did not converge (", to_string(info.status),
                ", relative residual ", info.residual, "); the eigenvalue may not be well separated");
  return w - v * space.dot(v, w);                      // stay ⟂ v
}

}  // namespace tessera::sla::detail
