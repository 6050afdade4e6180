// Distributed matrices at 1, 2 and 4 ranks against dense single-process references in
// float64: products, transposed products, gradients, solves and solve gradients, for
// contiguous and METIS partitions and symmetric and non-symmetric patterns.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/sla/dist/dsolve.h"
#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/dist/dsparse_tensor_list.h"
#include "tessera/sla/dist/local_generators.h"
#include "tessera/sla/generators.h"

namespace tessera::sla {
namespace {

// A random non-symmetric pattern with a dominant diagonal, the same on every rank.
SparseTensor random_nonsymmetric(int64_t n, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  at::Tensor dense = at::rand({n, n}, gen, at::kDouble) - 0.5;
  dense = dense * (at::rand({n, n}, gen, at::kDouble) < 0.15).to(at::kDouble);  // sparse, non-symmetric
  dense = dense + at::eye(n, at::kDouble) * 4.0;
  return SparseTensor::from_dense(dense);
}

enum class Kind { PoissonContiguous, PoissonMetis, NonsymContiguous, NonsymMetis };

struct Case {
  SparseTensor global;
  RowPartition partition;
};

Case make_case(Kind kind, int parts) {
  bool poisson = kind == Kind::PoissonContiguous || kind == Kind::PoissonMetis;
  SparseTensor a = poisson ? poisson2d(9) : random_nonsymmetric(70, 42);
  bool metis = kind == Kind::PoissonMetis || kind == Kind::NonsymMetis;
  RowPartition p = metis ? RowPartition::metis(a, parts) : RowPartition::contiguous(a.rows(), parts);
  return {a, p};
}

double rel_err(const at::Tensor& got, const at::Tensor& want) {
  return (got - want).norm().item<double>() / std::max(1e-300, want.norm().item<double>());
}

class Distributed : public ::testing::TestWithParam<Kind> {
 protected:
  std::shared_ptr<dist::Communicator> comm = dist::world();
};

TEST_P(Distributed, MatvecAndRmatvecEqualSingleProcess) {
  Case c = make_case(GetParam(), comm->size());
  DSparseTensor d = DSparseTensor::from_global(comm, c.partition, c.global);
  at::Tensor dense = c.global.to_dense();
  at::Tensor x = at::linspace(-1.0, 2.0, c.global.rows(), at::kDouble);
  at::Tensor xk = at::stack({x, x.flip(0) * 3.0}, 1);
  EXPECT_LT(rel_err(d.gather_all(d.matvec(d.scatter(x))), dense.mv(x)), 1e-12);
  EXPECT_LT(rel_err(d.gather_all(d.rmatvec(d.scatter(x))), dense.t().mv(x)), 1e-12);
  EXPECT_LT(rel_err(d.gather_all(d.matvec(d.scatter(xk))), dense.mm(xk)), 1e-12);
  EXPECT_EQ(d.global_nnz(), c.global.nnz());
  // same pattern, doubled values: twice the product
  DSparseTensor doubled = d.with_values(d.values() * 2.0);
  EXPECT_LT(rel_err(d.gather_all(doubled.matvec(d.scatter(x))), dense.mv(x) * 2.0), 1e-12);
}

TEST_P(Distributed, ScatterFromRootEqualsFromGlobal) {
  Case c = make_case(GetParam(), comm->size());
  DSparseTensor a = DSparseTensor::from_global(comm, c.partition, c.global);
  SparseTensor on_root = comm->rank() == 0 ? c.global : SparseTensor();
  DSparseTensor b = DSparseTensor::scatter_from_root(comm, c.partition, on_root);
  at::Tensor x = at::cos(at::arange(c.global.rows(), at::kDouble));
  EXPECT_TRUE(at::equal(a.matvec(a.scatter(x)), b.matvec(b.scatter(x, /*from_root=*/true))));
}

TEST_P(Distributed, MatvecGradientsEqualSingleProcess) {
  Case c = make_case(GetParam(), comm->size());
  at::Tensor values = c.global.values().clone().set_requires_grad(true);
  at::Tensor x = at::sin(at::arange(c.global.rows(), at::kDouble)).set_requires_grad(true);
  at::Tensor w = at::linspace(0.5, 1.5, c.global.rows(), at::kDouble);
  // distributed: L = sum_r <w_r, (A x)_r> + <w_r, (A^T x)_r>^2-ish terms
  DSparseTensor d = DSparseTensor::from_global(comm, c.partition, c.global.with_values(values));
  at::Tensor x_owned = d.scatter(x);
  at::Tensor w_owned = d.scatter(w);
  at::Tensor local = (w_owned * d.matvec(x_owned)).sum() + (w_owned * d.rmatvec(x_owned)).pow(2).sum();
  local.backward();
  at::Tensor gv = values.grad().clone(), gx = x.grad().clone();
  comm->all_reduce(gv, dist::ReduceOp::Sum);
  comm->all_reduce(gx, dist::ReduceOp::Sum);
  // dense reference
  at::Tensor v2 = c.global.values().clone().set_requires_grad(true);
  at::Tensor x2 = x.detach().clone().set_requires_grad(true);
  at::Tensor dense = c.global.with_values(v2).to_dense();
  ((w * dense.mv(x2)).sum() + (w * dense.t().mv(x2)).pow(2).sum()).backward();
  EXPECT_LT(rel_err(gv, v2.grad()), 1e-12);
  EXPECT_LT(rel_err(gx, x2.grad()), 1e-12);
}

TEST_P(Distributed, SolveAndItsGradientsEqualSingleProcess) {
  Case c = make_case(GetParam(), comm->size());
  const bool symmetric = GetParam() == Kind::PoissonContiguous || GetParam() == Kind::PoissonMetis;
  SolveOptions options;
  options.method = symmetric ? Method::CG : Method::BiCGStab;
  options.rtol = 1e-14;
  at::Tensor values = c.global.values().clone().set_requires_grad(true);
  at::Tensor b = at::cos(at::arange(c.global.rows(), at::kDouble) * 0.3).set_requires_grad(true);
  at::Tensor w = at::linspace(-1.0, 1.0, c.global.rows(), at::kDouble);
  DSparseTensor d = DSparseTensor::from_global(comm, c.partition, c.global.with_values(values));
  auto [x_owned, info] = dsolve(d, d.scatter(b), options);
  EXPECT_EQ(info.status, SolveStatus::Converged) << info.message;
  EXPECT_LT(info.residual, 1e-13);
  (d.scatter(w) * x_owned).sum().backward();
  at::Tensor x = d.gather_all(x_owned.detach());
  at::Tensor gv = values.grad().clone(), gb = b.grad().clone();
  comm->all_reduce(gv, dist::ReduceOp::Sum);
  comm->all_reduce(gb, dist::ReduceOp::Sum);
  // dense reference: x = A^{-1} b, L = <w, x>
  at::Tensor v2 = c.global.values().clone().set_requires_grad(true);
  at::Tensor b2 = b.detach().clone().set_requires_grad(true);
  at::Tensor x2 = at::linalg_solve(c.global.with_values(v2).to_dense(), b2);
  (w * x2).sum().backward();
  EXPECT_LT(rel_err(x, x2.detach()), 1e-12);
  EXPECT_LT(rel_err(gb, b2.grad()), 1e-10);
  EXPECT_LT(rel_err(gv, v2.grad()), 1e-10);
}

std::string kind_name(const ::testing::TestParamInfo<Kind>& info) {
  static const char* const names[] = {"PoissonContiguous", "PoissonMetis", "NonsymContiguous", "NonsymMetis"};
  return names[static_cast<int>(info.param)];
}

INSTANTIATE_TEST_SUITE_P(Patterns, Distributed,
                         ::testing::Values(Kind::PoissonContiguous, Kind::PoissonMetis,
                                           Kind::NonsymContiguous, Kind::NonsymMetis),
                         kind_name);

TEST(DistributedEdgeCases, MoreRanksThanRowsLeavesEmptyRanksWorking) {
  auto comm = dist::world();
  at::Tensor dense = at::tensor({4.0, -1.0, 0.0, -1.0, 4.0, -1.0, 0.0, -1.0, 4.0}, at::kDouble).reshape({3, 3});
  SparseTensor a = SparseTensor::from_dense(dense);
  // 3 rows over P ranks: with P = 4 one rank owns nothing
  RowPartition p = RowPartition::contiguous(3, comm->size());
  DSparseTensor d = DSparseTensor::from_global(comm, p, a);
  at::Tensor x = at::tensor({1.0, 2.0, 3.0}, at::kDouble);
  EXPECT_LT(rel_err(d.gather_all(d.matvec(d.scatter(x))), dense.mv(x)), 1e-15);
  SolveOptions options;
  options.rtol = 1e-14;
  auto [xs, info] = dsolve(d, d.scatter(dense.mv(x)), options);
  EXPECT_EQ(info.status, SolveStatus::Converged);
  EXPECT_LT(rel_err(d.gather_all(xs), x), 1e-12);
}

TEST(DistributedEdgeCases, MetisRejectsMorePartsThanRows) {
  auto comm = dist::world();
  SparseTensor a = SparseTensor::from_dense(at::eye(1, at::kDouble));
  if (comm->size() > 1) EXPECT_THROW(RowPartition::metis(a, comm->size()), InvalidInput);
}

TEST(DistributedEdgeCases, CoordinateBisectionBalancesParts) {
  auto comm = dist::world();
  at::Tensor coords = at::rand({1000, 2}, at::detail::createCPUGenerator(7), at::kDouble);
  RowPartition p = RowPartition::coordinate_bisection(coords, 3);
  auto counts = p.counts();
  for (int64_t c : counts) EXPECT_NEAR(static_cast<double>(c), 1000.0 / 3, 1.0);
}

}  // namespace
}  // namespace tessera::sla

namespace tessera::sla {
namespace {

TEST(DistributedList, DifferentPatternsSolveAndDifferentiate) {
  auto comm = dist::world();
  SparseTensor a = poisson2d(6), b = random_nonsymmetric(40, 3);
  DSparseTensor da = DSparseTensor::from_global(comm, RowPartition::contiguous(a.rows(), comm->size()), a);
  DSparseTensor db = DSparseTensor::from_global(comm, RowPartition::metis(b, comm->size()), b);
  DSparseTensorList list({da, db});
  at::Tensor xa = at::ones({a.rows()}, at::kDouble), xb = at::ones({b.rows()}, at::kDouble);
  auto ys = list.matvec({da.scatter(xa), db.scatter(xb)});
  EXPECT_LT(rel_err(da.gather_all(ys[0]), a.to_dense().mv(xa)), 1e-14);
  EXPECT_LT(rel_err(db.gather_all(ys[1]), b.to_dense().mv(xb)), 1e-14);
  SolveOptions options;
  options.method = Method::BiCGStab;
  options.rtol = 1e-13;
  auto [xs, infos] = list.solve(ys, options);
  EXPECT_EQ(infos[0].status, SolveStatus::Converged);
  EXPECT_EQ(infos[1].status, SolveStatus::Converged);
  EXPECT_LT(rel_err(da.gather_all(xs[0]), xa), 1e-11);
  EXPECT_LT(rel_err(db.gather_all(xs[1]), xb), 1e-11);
  EXPECT_THROW(list.matvec({ys[0]}), DimensionMismatch);
}

TEST(DistributedConstruction, LocalRowsEqualGlobalPoisson) {
  auto comm = dist::world();
  for (bool three_d : {false, true}) {
    SparseTensor global = three_d ? poisson3d(5) : poisson2d(11);
    const int64_t n = three_d ? 5 : 11;
    RowPartition p = RowPartition::contiguous(global.rows(), comm->size());
    at::Tensor mine = p.rows_of(comm->rank());
    SparseTensor rows = three_d ? poisson3d_rows(n, mine) : poisson2d_rows(n, mine);
    DSparseTensor from_rows = DSparseTensor::from_local_rows(comm, p, rows);
    DSparseTensor from_all = DSparseTensor::from_global(comm, p, global);
    at::Tensor x = at::sin(at::arange(global.rows(), at::kDouble));
    EXPECT_TRUE(at::equal(from_rows.matvec(from_rows.scatter(x)), from_all.matvec(from_all.scatter(x))));
  }
}

}  // namespace
}  // namespace tessera::sla

namespace tessera::sla {
namespace {

TEST(DistributedPreconditioners, BlockJacobiSolvesAndDifferentiatesLikeJacobi) {
  auto comm = dist::world();
  for (Kind kind : {Kind::PoissonMetis, Kind::NonsymContiguous}) {
    Case c = make_case(kind, comm->size());
    SolveOptions jacobi, block;
    jacobi.method = block.method = kind == Kind::PoissonMetis ? Method::CG : Method::GMRES;
    jacobi.rtol = block.rtol = 1e-13;
    block.preconditioner = Preconditioner::BlockJacobi;
    at::Tensor values = c.global.values().clone().set_requires_grad(true);
    at::Tensor b = at::cos(at::arange(c.global.rows(), at::kDouble));
    DSparseTensor d = DSparseTensor::from_global(comm, c.partition, c.global.with_values(values));
    auto [xj, info_j] = dsolve(d, d.scatter(b), jacobi);
    auto [xb, info_b] = dsolve(d, d.scatter(b), block);
    EXPECT_EQ(info_b.status, SolveStatus::Converged) << info_b.message;
    // the block preconditioner is exact on one rank. With more blocks it is not always
    // better than Jacobi on these tiny matrices (CG on the 81-row Poisson matrix in 4 METIS
    // blocks: 37 iterations against Jacobi's 36), so only convergence is asserted there.
    if (comm->size() == 1) EXPECT_LE(info_b.iterations, 2);
    EXPECT_LT(rel_err(d.gather_all(xb.detach()), d.gather_all(xj.detach())), 1e-10);
    // gradient through the block-Jacobi adjoint solve equals the dense one
    xb.sum().backward();
    at::Tensor gv = values.grad().clone();
    comm->all_reduce(gv, dist::ReduceOp::Sum);
    at::Tensor v2 = c.global.values().clone().set_requires_grad(true);
    at::linalg_solve(c.global.with_values(v2).to_dense(), b).sum().backward();
    EXPECT_LT(rel_err(gv, v2.grad()), 1e-9);
  }
}

}  // namespace
}  // namespace tessera::sla
