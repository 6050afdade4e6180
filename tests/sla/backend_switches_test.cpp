// The TESSERA_WITH_* build switches: a backend switched on is listed and made; one switched
// off (cmake -DTESSERA_WITH_<NAME>=OFF, e.g. the build-minimal of DEVELOPERS.md) is not
// listed, and asking for it by name throws NotCompiled, also through solve().

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/sla/backends/direct_backend.h"
#include "tessera/sla/backends/iterative_backend.h"
#include "tessera/sla/determinant.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/solve.h"

// A switched-off backend's define is not set at all.
#ifndef TESSERA_WITH_EIGEN
#define TESSERA_WITH_EIGEN 0
#endif
#ifndef TESSERA_WITH_CHOLMOD
#define TESSERA_WITH_CHOLMOD 0
#endif
#ifndef TESSERA_WITH_UMFPACK
#define TESSERA_WITH_UMFPACK 0
#endif
#ifndef TESSERA_WITH_SUPERLU
#define TESSERA_WITH_SUPERLU 0
#endif

namespace tessera::sla {
namespace {

struct Switch {
  Backend backend;
  bool compiled;   // the build's TESSERA_WITH_<NAME>
};

const std::vector<Switch> kDirectSwitches = {
    {Backend::Eigen, TESSERA_WITH_EIGEN != 0},
    {Backend::Cholmod, TESSERA_WITH_CHOLMOD != 0},
    {Backend::Umfpack, TESSERA_WITH_UMFPACK != 0},
    {Backend::Superlu, TESSERA_WITH_SUPERLU != 0},
};

bool listed(const std::vector<Backend>& list, Backend b) { return std::find(list.begin(), list.end(), b) != list.end(); }

TEST(BackendSwitches, DirectBackendsFollowTheBuildSwitches) {
  const std::vector<Backend> compiled = compiled_direct_backends();
  const SparseTensor a = poisson2d(4);
  for (const Switch& s : kDirectSwitches) {
    SCOPED_TRACE(to_string(s.backend));
    EXPECT_EQ(listed(compiled, s.backend), s.compiled);
    SolveOptions named;
    named.backend = s.backend;
    if (s.compiled) {
      EXPECT_EQ(make_direct_backend(s.backend)->name(), to_string(s.backend));
      EXPECT_EQ(solve(a, at::ones({16}, at::kDouble), named).second.status, SolveStatus::Converged);
    } else {
      EXPECT_THROW(make_direct_backend(s.backend), NotCompiled);
      EXPECT_THROW(make_direct_backend(to_string(s.backend)), NotCompiled);
      EXPECT_THROW(solve(a, at::ones({16}, at::kDouble), named), NotCompiled);
    }
  }
}

TEST(BackendSwitches, IterativeBackendsFollowTheBuildSwitches) {
  const std::vector<Backend> compiled = compiled_iterative_backends();
  EXPECT_TRUE(listed(compiled, Backend::Native));   // tessera's own: always there
  EXPECT_EQ(make_iterative_backend(Backend::Native)->name(), "native");
  SolveOptions cg;
  cg.backend = Backend::Eigen;
  cg.method = Method::CG;
  const SparseTensor a = poisson2d(4);
  if (TESSERA_WITH_EIGEN != 0) {
    EXPECT_TRUE(listed(compiled, Backend::Eigen));
    EXPECT_EQ(solve(a, at::ones({16}, at::kDouble), cg).second.status, SolveStatus::Converged);
  } else {
    EXPECT_FALSE(listed(compiled, Backend::Eigen));
    EXPECT_THROW(make_iterative_backend(Backend::Eigen), NotCompiled);
    EXPECT_THROW(solve(a, at::ones({16}, at::kDouble), cg), NotCompiled);
  }
}

// With no direct backend at all, auto dispatch still solves (native Krylov), and naming a
// direct method says that none is compiled in.
TEST(BackendSwitches, AutoDispatchWithoutDirectBackends) {
  if (!compiled_direct_backends().empty()) GTEST_SKIP() << "direct backends are compiled in";
  const SparseTensor a = poisson2d(8);
  auto [x, info] = solve(a, at::ones({64}, at::kDouble));
  EXPECT_EQ(info.status, SolveStatus::Converged) << info.message;
  EXPECT_EQ(info.backend, "native");
  SolveOptions lu;
  lu.method = Method::LU;
  EXPECT_THROW(solve(a, at::ones({64}, at::kDouble), lu), NotCompiled);
}

TEST(BackendSwitches, LogdetNeedsSuiteSparse) {
  const SparseTensor spd = poisson2d(3);
  if (TESSERA_WITH_CHOLMOD != 0) {
    DetOptions cholmod;
    cholmod.backend = Backend::Cholmod;
    EXPECT_EQ(logdet(spd, cholmod).second.status, SolveStatus::Converged);
  } else {
    EXPECT_THROW(logdet(spd), NotCompiled);   // auto: Cholesky for an SPD candidate
  }
  if (TESSERA_WITH_UMFPACK != 0) {
    DetOptions umfpack;
    umfpack.backend = Backend::Umfpack;
    EXPECT_EQ(logdet(spd, umfpack).second.status, SolveStatus::Converged);
  } else {
    DetOptions umfpack;
    umfpack.backend = Backend::Umfpack;
    EXPECT_THROW(logdet(spd, umfpack), NotCompiled);
  }
}

TEST(BackendSwitches, NamesParseAtTheEdges) {
  for (Backend b : {Backend::Auto, Backend::Native, Backend::Eigen, Backend::Cholmod, Backend::Umfpack,
                    Backend::Superlu, Backend::Mumps}) {
    EXPECT_EQ(parse_backend(to_string(b)), b);
  }
  EXPECT_THROW(parse_backend("pardiso"), InvalidInput);
  EXPECT_THROW(make_direct_backend(Backend::Native), InvalidInput);
  EXPECT_THROW(make_iterative_backend(Backend::Cholmod), InvalidInput);
}

}  // namespace
}  // namespace tessera::sla
