// dslogdet / dlogdet (MUMPS's LU determinant across ranks) at 1, 2 and 4 ranks in float64:
// sign and log|det| equal one process's slogdet to 1e-10 on 2D Poisson and SuiteSparse
// matrices (symmetric and general, contiguous and METIS rows); the gradient (MUMPS's
// selected inversion, (A^{-1})_ji on the pattern) equals the dense inverse and central finite
// differences; a singular matrix gives status Singular and -inf. Skipped without MUMPS.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cctype>
#include <cmath>
#include <string>

#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/sla/determinant.h"
#include "tessera/sla/dist/dlogdet.h"
#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/matrix_market.h"

namespace tessera::sla {
namespace {

SparseTensor matrix(const std::string& name) {
  if (name == "poisson2d") return poisson2d(30);
  return read_matrix_market(std::string(TESSERA_SHARED_DATA) + "/matrices/" + name + ".mtx").to_sparse();
}

#define LOGDET_OR_SKIP(result, call)             \
  try {                                          \
    result = call;                               \
  } catch (const NotCompiled&) {                 \
    GTEST_SKIP() << "MUMPS is not compiled in";  \
  }

struct Case {
  const char* matrix;
  bool metis;
};

class DistLogdet : public ::testing::TestWithParam<Case> {
 protected:
  std::shared_ptr<dist::Communicator> comm = dist::world();
};

TEST_P(DistLogdet, SignAndLogAbsDetAndGradientEqualOneProcess) {
  const Case& c = GetParam();
  SparseTensor a = matrix(c.matrix);
  RowPartition part = c.metis ? RowPartition::metis(a, comm->size()) : RowPartition::contiguous(a.rows(), comm->size());
  at::Tensor values = a.values().to(at::kDouble).clone().set_requires_grad(true);
  DSparseTensor d = DSparseTensor::from_global(comm, part, a.with_values(values));
  SlogdetResult r;
  LOGDET_OR_SKIP(r, dslogdet(d));
  EXPECT_EQ(r.info.status, SolveStatus::Converged) << r.info.message;
  EXPECT_EQ(r.info.backend, "mumps");
  SlogdetResult one = slogdet(a.with_values(a.values().to(at::kDouble)));
  EXPECT_EQ(r.sign.item<double>(), one.sign.item<double>());
  const double ld = one.logabsdet.item<double>();
  EXPECT_NEAR(r.logabsdet.item<double>(), ld, 1e-10 * std::max(1.0, std::abs(ld))) << comm->size() << " ranks";
  (comm->rank() == 0 ? r.logabsdet : 0.0 * r.logabsdet).backward();   // the loss counted once
  at::Tensor grad = values.grad().clone();
  comm->all_reduce(grad, dist::ReduceOp::Sum);
  // (A^{-T})_ij on the pattern from the dense inverse (one process's own backward, an
  // unpivoted LDU, cannot take west0067)
  const at::Tensor inverse = at::linalg_inv(a.to_dense().to(at::kDouble));
  const at::Tensor want = inverse.index({a.col_idx().to(at::kLong), a.row_indices()});
  EXPECT_LT((grad - want).abs().max().item<double>(), 1e-10 * want.abs().max().item<double>());
}

INSTANTIATE_TEST_SUITE_P(Matrices, DistLogdet,
                         ::testing::Values(Case{"poisson2d", false}, Case{"poisson2d", true}, Case{"494_bus", true},
                                           Case{"west0067", false}, Case{"olm1000", true}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = std::string(info.param.matrix) + (info.param.metis ? "Metis" : "Contiguous");
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

TEST(DistLogdetGradients, MatchCentralFiniteDifferences) {
  auto comm = dist::world();
  for (const char* name : {"poisson2d", "west0067"}) {
    SparseTensor a = std::string(name) == "poisson2d" ? poisson2d(12) : matrix(name);
    RowPartition part = RowPartition::metis(a, comm->size());
    const at::Tensor v0 = a.values().to(at::kDouble);
    at::Tensor values = v0.clone().set_requires_grad(true);
    SlogdetResult r;
    LOGDET_OR_SKIP(r, dslogdet(DSparseTensor::from_global(comm, part, a.with_values(values))));
    (comm->rank() == 0 ? r.logabsdet : 0.0 * r.logabsdet).backward();
    at::Tensor grad = values.grad().clone();
    comm->all_reduce(grad, dist::ReduceOp::Sum);
    const at::Tensor dv = at::sin(at::arange(v0.numel(), at::kDouble) * 1.3) * v0.abs().clamp_min(1e-3);
    const double h = 1e-6;
    // west0067 has det < 0: difference log|det| through slogdet
    auto value = [&](const at::Tensor& v) {
      return dslogdet(DSparseTensor::from_global(comm, part, a.with_values(v))).logabsdet.item<double>();
    };
    const double fd = (value(v0 + h * dv) - value(v0 - h * dv)) / (2 * h);
    const double an = (grad * dv).sum().item<double>();
    EXPECT_NEAR(an, fd, 1e-6 * std::max(1.0, std::abs(fd))) << name << ", " << comm->size() << " ranks";
  }
}

TEST(DistLogdetErrors, SingularMatrixGivesStatusSingularOnEveryRank) {
  auto comm = dist::world();
  SparseTensor a = matrix("dwt_878");   // unit values: singular (shared/data/matrices/README.md)
  DSparseTensor d = DSparseTensor::from_global(comm, RowPartition::contiguous(a.rows(), comm->size()), a);
  std::pair<at::Tensor, DetInfo> r;
  LOGDET_OR_SKIP(r, dlogdet(d));
  EXPECT_EQ(r.second.status, SolveStatus::Singular) << r.second.message;
  EXPECT_TRUE(std::isinf(r.first.item<double>()) && r.first.item<double>() < 0);
  DetOptions cholmod;
  cholmod.backend = Backend::Cholmod;
  EXPECT_THROW(dlogdet(d, cholmod), Unsupported);
}

}  // namespace
}  // namespace tessera::sla
