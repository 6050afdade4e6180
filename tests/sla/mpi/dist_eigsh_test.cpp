// deigsh (eigsh across ranks) at 1, 2 and 4 ranks in float64: the smallest and largest
// eigenpairs of symmetric matrices (contiguous and METIS rows) equal one process's native
// eigsh to 1e-10, shift-invert through MUMPS equals one process's, small n takes the dense
// path, gradients of eigenvalue and eigenvector losses match central finite differences,
// and a non-symmetric matrix throws on every rank.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>

#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/sla/dist/deigsh.h"
#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/eigsh.h"
#include "tessera/sla/generators.h"

namespace tessera::sla {
namespace {

// Tridiagonal -1, 2 + 0.3 sin(i), -1: symmetric with simple eigenvalues.
SparseTensor varied_1d(int64_t n) {
  at::Tensor i = at::arange(n, at::kLong);
  at::Tensor off = at::arange(n - 1, at::kLong);
  at::Tensor rows = at::cat({i, off, off + 1}), cols = at::cat({i, off + 1, off});
  at::Tensor vals = at::cat({2.0 + 0.3 * at::sin(i.to(at::kDouble)), -at::ones({2 * (n - 1)}, at::kDouble)});
  return SparseTensor::from_coo(vals, rows, cols, n, n);
}

double max_abs(const at::Tensor& t) { return t.abs().max().item<double>(); }

EigshOptions options(int64_t k, Which which) {
  EigshOptions o;
  o.k = k;
  o.which = which;
  o.backend = EigshBackend::Native;
  return o;
}

struct Case {
  const char* name;
  bool metis;
  Which which;
  bool compare_vectors;  // eigenvalues simple: eigenvectors are unique up to the sign fixed by eigsh
};

class DistEigsh : public ::testing::TestWithParam<Case> {
 protected:
  std::shared_ptr<dist::Communicator> comm = dist::world();
};

TEST_P(DistEigsh, EqualsOneProcessNativeEigsh) {
  const Case& c = GetParam();
  SparseTensor a = std::string(c.name) == "poisson2d" ? poisson2d(20) : varied_1d(300);
  RowPartition part = c.metis ? RowPartition::metis(a, comm->size()) : RowPartition::contiguous(a.rows(), comm->size());
  DSparseTensor d = DSparseTensor::from_global(comm, part, a);
  const EigshOptions o = options(4, c.which);
  EigshResult dist_r = deigsh(d, o);
  EigshResult one = eigsh(a, o);
  ASSERT_EQ(dist_r.info.status, SolveStatus::Converged) << dist_r.info.message;
  EXPECT_EQ(dist_r.info.backend, "native");
  const double scale = max_abs(one.eigenvalues);
  EXPECT_LT(max_abs(dist_r.eigenvalues - one.eigenvalues), 1e-10 * scale) << comm->size() << " ranks";
  EXPECT_LT(dist_r.info.max_residual, 1e-8 * scale);
  if (c.compare_vectors) {
    EXPECT_LT(max_abs(d.gather_all(dist_r.eigenvectors) - one.eigenvectors), 1e-10) << comm->size() << " ranks";
  }
}

INSTANTIATE_TEST_SUITE_P(Matrices, DistEigsh,
                         ::testing::Values(Case{"poisson2d", false, Which::Smallest, false},
                                           Case{"poisson2d", true, Which::Largest, false},
                                           Case{"varied1d", false, Which::Smallest, true},
                                           Case{"varied1d", true, Which::Largest, true}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.name) + (info.param.metis ? "Metis" : "Contiguous") +
                                  (info.param.which == Which::Smallest ? "Smallest" : "Largest");
                         });

TEST(DistEigshShiftInvert, NearestSigmaThroughMumpsEqualsOneProcess) {
  auto comm = dist::world();
  SparseTensor a = varied_1d(200);
  DSparseTensor d = DSparseTensor::from_global(comm, RowPartition::metis(a, comm->size()), a);
  EigshOptions o = options(3, Which::Nearest);
  o.sigma = 1.3;
  EigshResult dist_r;
  try {
    dist_r = deigsh(d, o);
  } catch (const NotCompiled&) {
    GTEST_SKIP() << "MUMPS is not compiled in";
  }
  EigshResult one = eigsh(a, o);
  ASSERT_EQ(dist_r.info.status, SolveStatus::Converged) << dist_r.info.message;
  EXPECT_LT(max_abs(dist_r.eigenvalues - one.eigenvalues), 1e-10);
  EXPECT_LT(max_abs(d.gather_all(dist_r.eigenvectors) - one.eigenvectors), 1e-9);
}

TEST(DistEigshDense, SmallMatrixGathersRowsAndEqualsOneProcess) {
  auto comm = dist::world();
  SparseTensor a = varied_1d(18);
  DSparseTensor d = DSparseTensor::from_global(comm, RowPartition::contiguous(a.rows(), comm->size()), a);
  EigshResult dist_r = deigsh(d, options(3, Which::Smallest));
  EigshResult one = eigsh(a, options(3, Which::Smallest));
  EXPECT_EQ(dist_r.info.backend, "native (dense)");
  EXPECT_LT(max_abs(dist_r.eigenvalues - one.eigenvalues), 1e-12);
  EXPECT_LT(max_abs(d.gather_all(dist_r.eigenvectors) - one.eigenvectors), 1e-12);
}

// L = <c, λ> (counted once: on rank 0) + sum over ranks of <w_owned, V_owned>.
double global_loss(const std::shared_ptr<dist::Communicator>& comm, const RowPartition& part, const SparseTensor& a,
                   const at::Tensor& values, const EigshOptions& o, const at::Tensor& c, const at::Tensor& w,
                   at::Tensor* values_grad = nullptr) {
  at::Tensor v = values.clone().set_requires_grad(values_grad != nullptr);
  DSparseTensor d = DSparseTensor::from_global(comm, part, a.with_values(v));
  EigshResult r = deigsh(d, o);
  at::Tensor loss = (d.scatter(w) * r.eigenvectors).sum();
  if (comm->rank() == 0) loss = loss + (c * r.eigenvalues).sum();
  if (values_grad) {
    loss.backward();
    *values_grad = v.grad().clone();
    comm->all_reduce(*values_grad, dist::ReduceOp::Sum);  // each rank's rows give their part
  }
  at::Tensor total = loss.detach().reshape({1}).clone();
  comm->all_reduce(total, dist::ReduceOp::Sum);
  return total.item<double>();
}

TEST(DistEigshGradients, EigenvalueAndEigenvectorLossesMatchFiniteDifferences) {
  auto comm = dist::world();
  struct Grad {
    int64_t n;
    bool vectors;  // the dense path is exact, so its eigenvectors can be differenced
  };
  for (Grad g : {Grad{120, false}, Grad{19, true}}) {
    SparseTensor a = varied_1d(g.n);
    RowPartition part = RowPartition::metis(a, comm->size());
    const EigshOptions o = options(3, Which::Smallest);
    const at::Tensor v0 = a.values().to(at::kDouble);
    const at::Tensor c = at::tensor({1.0, -0.5, 2.0}, at::kDouble);
    const at::Tensor w = g.vectors ? at::cos(at::arange(g.n * 3, at::kDouble) * 0.3).reshape({g.n, 3})
                                   : at::zeros({g.n, 3}, at::kDouble);
    at::Tensor grad;
    global_loss(comm, part, a, v0, o, c, w, &grad);
    // a symmetric direction: dv_ab = dv_ba
    at::Tensor sum_rc = (a.row_indices() + a.col_idx().to(at::kLong)).to(at::kDouble);
    const at::Tensor dv = at::sin(sum_rc * 1.3) * 0.5;
    const double h = 1e-6;
    const double fd = (global_loss(comm, part, a, v0 + h * dv, o, c, w) - global_loss(comm, part, a, v0 - h * dv, o, c, w)) /
                      (2 * h);
    const double an = (grad * dv).sum().item<double>();
    EXPECT_NEAR(an, fd, 1e-6 * std::max(1.0, std::abs(fd))) << "n " << g.n << ", " << comm->size() << " ranks";
  }
}

TEST(DistEigshErrors, NonSymmetricMatrixThrowsOnEveryRank) {
  auto comm = dist::world();
  SparseTensor a = varied_1d(40);
  at::Tensor v = a.values().clone();
  v[1] = -3.0;  // a_01 (row 0 stores a_00, a_01): the symmetry is broken
  DSparseTensor d = DSparseTensor::from_global(comm, RowPartition::contiguous(a.rows(), comm->size()),
                                               a.with_values(v));
  EXPECT_THROW(deigsh(d, options(2, Which::Largest)), InvalidInput);
  EigshOptions spectra = options(2, Which::Largest);
  spectra.backend = EigshBackend::Spectra;
  DSparseTensor ok = DSparseTensor::from_global(comm, RowPartition::contiguous(a.rows(), comm->size()), a);
  EXPECT_THROW(deigsh(ok, spectra), Unsupported);
}

}  // namespace
}  // namespace tessera::sla
