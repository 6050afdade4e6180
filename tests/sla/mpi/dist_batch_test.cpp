// DSparseTensorBatch (several value vectors on one distributed pattern) at 1, 2 and 4 ranks
// in float64: products, solves, eigsh and slogdet of every element equal one process's to
// 1e-10, and the gradient of a loss of the solutions with respect to the batched global
// values matches central finite differences.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>

#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/sla/determinant.h"
#include "tessera/sla/dist/dsparse_tensor_batch.h"
#include "tessera/sla/eigsh.h"
#include "tessera/sla/generators.h"

namespace tessera::sla {
namespace {

// Three SPD matrices on 2D Poisson's pattern: A_b = (1 + 0.2 b) A + b I (the diagonal shifted).
SparseTensor batched(const SparseTensor& a) {
  at::Tensor v = a.values().to(at::kDouble);
  at::Tensor diag = (a.col_idx().to(at::kLong) == a.row_indices()).to(at::kDouble);
  return a.with_values(at::stack({v, v * 1.2 + diag, v * 1.4 + 2.0 * diag}, 0));
}

double max_abs(const at::Tensor& t) { return t.abs().max().item<double>(); }

TEST(DistBatch, EveryElementEqualsOneProcess) {
  auto comm = dist::world();
  SparseTensor a = poisson2d(9);
  SparseTensor ab = batched(a);
  RowPartition part = RowPartition::metis(a, comm->size());
  DSparseTensorBatch d = DSparseTensorBatch::from_global(comm, part, ab);
  ASSERT_EQ(d.batch_size(), 3);
  const int64_t n = a.rows();
  at::Tensor x = at::stack({at::linspace(-1, 1, n, at::kDouble), at::cos(at::arange(n, at::kDouble)),
                            at::ones({n}, at::kDouble)}, 0);
  at::Tensor x_owned = at::stack({d[0].scatter(x[0]), d[0].scatter(x[1]), d[0].scatter(x[2])}, 0);
  at::Tensor y = d.matvec(x_owned);
  SolveOptions o;
  o.rtol = 1e-13;
  auto [xs, infos] = d.solve(x_owned, o);
  EigshOptions eo;
  eo.k = 3;
  eo.which = Which::Smallest;
  eo.backend = EigshBackend::Native;
  auto [eig, eig_infos] = d.eigsh(eo);
  for (int64_t b = 0; b < 3; ++b) {
    SparseTensor one = a.with_values(ab.values()[b]);
    at::Tensor dense = one.to_dense();
    EXPECT_LT(max_abs(d[b].gather_all(y[b]) - dense.mv(x[b])), 1e-12);
    EXPECT_EQ(infos[b].status, SolveStatus::Converged);
    EXPECT_LT(max_abs(d[b].gather_all(xs[b]) - at::linalg_solve(dense, x[b])), 1e-10);
    EXPECT_LT(max_abs(eig.first[b] - tessera::sla::eigsh(one, eo).eigenvalues), 1e-10);
  }
  try {
    auto [sl, det_infos] = d.slogdet();
    for (int64_t b = 0; b < 3; ++b) {
      const double want = tessera::sla::slogdet(a.with_values(ab.values()[b])).logabsdet.item<double>();
      EXPECT_NEAR(sl.second[b].item<double>(), want, 1e-10 * std::abs(want));
    }
  } catch (const NotCompiled&) {
    // slogdet across ranks needs MUMPS
  }
}

// L = sum_b <w_b, x_b> with A_b x_b = r, summed over the ranks.
double loss(const std::shared_ptr<dist::Communicator>& comm, const RowPartition& part, const SparseTensor& ab,
            const at::Tensor& values, const at::Tensor& w, at::Tensor* grad) {
  at::Tensor v = values.clone().set_requires_grad(grad != nullptr);
  DSparseTensorBatch d = DSparseTensorBatch::from_global(comm, part, ab.with_values(v));
  const int64_t n = ab.rows();
  at::Tensor r = d[0].scatter(at::sin(at::arange(n, at::kDouble)) + 1.0);
  SolveOptions o;
  o.rtol = 1e-13;
  at::Tensor xs = d.solve(at::stack({r, r, r}, 0), o).first;
  at::Tensor w_owned = at::stack({d[0].scatter(w[0]), d[0].scatter(w[1]), d[0].scatter(w[2])}, 0);
  at::Tensor l = (w_owned * xs).sum();
  if (grad) {
    l.backward();
    *grad = v.grad().clone();
    comm->all_reduce(*grad, dist::ReduceOp::Sum);
  }
  at::Tensor total = l.detach().reshape({1}).clone();
  comm->all_reduce(total, dist::ReduceOp::Sum);
  return total.item<double>();
}

TEST(DistBatch, SolveGradientWithRespectToBatchedValuesMatchesFiniteDifferences) {
  auto comm = dist::world();
  SparseTensor a = poisson2d(7);
  SparseTensor ab = batched(a);
  RowPartition part = RowPartition::contiguous(a.rows(), comm->size());
  const at::Tensor v0 = ab.values();
  const at::Tensor w = at::cos(at::arange(3 * a.rows(), at::kDouble) * 0.2).reshape({3, a.rows()});
  at::Tensor grad;
  loss(comm, part, ab, v0, w, &grad);
  ASSERT_EQ(grad.sizes(), v0.sizes());
  const at::Tensor dv = at::sin(at::arange(v0.numel(), at::kDouble) * 0.9).reshape(v0.sizes());
  const double h = 1e-6;
  const double fd = (loss(comm, part, ab, v0 + h * dv, w, nullptr) - loss(comm, part, ab, v0 - h * dv, w, nullptr)) / (2 * h);
  EXPECT_NEAR((grad * dv).sum().item<double>(), fd, 1e-6 * std::max(1.0, std::abs(fd)));
}

}  // namespace
}  // namespace tessera::sla
