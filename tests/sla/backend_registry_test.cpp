// Backend names, and input validation shared by every direct backend (in a build with all of
// them; backend_switches_test.cpp covers builds with some switched off).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "sla/support/test_matrices.h"
#include "tessera/sla/backends/direct_backend.h"

#if TESSERA_WITH_EIGEN && TESSERA_WITH_CHOLMOD && TESSERA_WITH_UMFPACK && TESSERA_WITH_SUPERLU
namespace tessera::sla::testing {
namespace {

const std::vector<std::pair<std::string, Method>> kBackendMethods = {
    {"eigen", Method::Cholesky}, {"eigen", Method::LDLT}, {"eigen", Method::LU},
    {"cholmod", Method::Cholesky}, {"umfpack", Method::LU}, {"superlu", Method::LU}};

TEST(BackendRegistry, NamesAndErrors) {
  const std::vector<Backend> compiled = compiled_direct_backends();
  for (Backend backend : {Backend::Eigen, Backend::Cholmod, Backend::Umfpack, Backend::Superlu}) {
    ASSERT_NE(std::find(compiled.begin(), compiled.end(), backend), compiled.end()) << to_string(backend);
    EXPECT_EQ(make_direct_backend(backend)->name(), to_string(backend));
    EXPECT_EQ(make_direct_backend(to_string(backend))->name(), to_string(backend));   // by name, at the edges
  }
  try {
    make_direct_backend("mumps");
    FAIL() << "expected InvalidInput";
  } catch (const tessera::InvalidInput& e) {
    EXPECT_NE(e.message().find("eigen, cholmod, umfpack, superlu"), std::string::npos) << e.message();
  }
  EXPECT_THROW(make_direct_backend("native"), tessera::InvalidInput);
}

TEST(BackendRegistry, MethodsEachBackendProvides) {
  for (const auto& [name, method] : kBackendMethods) {
    EXPECT_TRUE(make_direct_backend(name)->supports(method)) << name << " " << to_string(method);
  }
  for (const char* name : {"eigen", "cholmod", "umfpack", "superlu"}) {
    auto backend = make_direct_backend(name);
    EXPECT_FALSE(backend->supports(Method::CG)) << name;
    EXPECT_THROW(backend->factorize(poisson2d(3), Method::CG), tessera::Unsupported) << name;
  }
}

// Every backend x method rejects malformed input with a typed error, before the library sees it.
TEST(BackendValidation, BadMatricesGiveTypedErrors) {
  const CsrMatrix good = poisson2d(3);
  for (const auto& [name, method] : kBackendMethods) {
    SCOPED_TRACE(name + " " + to_string(method));
    auto backend = make_direct_backend(name);
    CsrMatrix rectangular = good;
    rectangular.cols = 10;
    EXPECT_THROW(backend->factorize(rectangular, method), tessera::DimensionMismatch);
    CsrMatrix empty;
    empty.row_ptr = at::zeros({1}, at::kLong);
    empty.col_idx = at::zeros({0}, at::kLong);
    empty.values = at::zeros({0}, at::kDouble);
    EXPECT_THROW(backend->factorize(empty, method), tessera::InvalidInput);
    CsrMatrix nan = good;
    nan.values = good.values.clone();
    nan.values[2] = std::nan("");
    EXPECT_THROW(backend->factorize(nan, method), tessera::InvalidInput);
    CsrMatrix single = good;
    single.values = good.values.to(at::kFloat);
    EXPECT_THROW(backend->factorize(single, method), tessera::Unsupported);
    CsrMatrix int32 = good;
    int32.col_idx = good.col_idx.to(at::kInt);
    EXPECT_THROW(backend->factorize(int32, method), tessera::InvalidInput);
    CsrMatrix out_of_range = good;
    out_of_range.col_idx = good.col_idx.clone();
    out_of_range.col_idx[1] = 99;
    EXPECT_THROW(backend->factorize(out_of_range, method), tessera::InvalidInput);
    CsrMatrix unsorted = good;
    unsorted.col_idx = good.col_idx.clone();
    std::swap(unsorted.col_idx.data_ptr<int64_t>()[0], unsorted.col_idx.data_ptr<int64_t>()[1]);
    EXPECT_THROW(backend->factorize(unsorted, method), tessera::InvalidInput);
    CsrMatrix short_values = good;
    short_values.values = good.values.slice(0, 0, 5);
    EXPECT_THROW(backend->factorize(short_values, method), tessera::DimensionMismatch);
  }
}

TEST(BackendValidation, BadRightHandSidesGiveTypedErrors) {
  const CsrMatrix a = poisson2d(3);
  for (const auto& [name, method] : kBackendMethods) {
    SCOPED_TRACE(name + " " + to_string(method));
    auto f = make_direct_backend(name)->factorize(a, method);
    ASSERT_EQ(f->status(), SolveStatus::Converged);
    EXPECT_THROW(f->solve(at::ones({8}, at::kDouble), false), tessera::DimensionMismatch);
    EXPECT_THROW(f->solve(at::ones({9, 2, 2}, at::kDouble), false), tessera::DimensionMismatch);
    EXPECT_THROW(f->solve(at::ones({9}, at::kFloat), false), tessera::Unsupported);
    at::Tensor nan = at::ones({9}, at::kDouble);
    nan[4] = std::nan("");
    EXPECT_THROW(f->solve(nan, false), tessera::InvalidInput);
    // a non-contiguous [n, k] view is fine
    at::Tensor wide = at::randn({9, 4}, at::kDouble);
    at::Tensor strided = wide.slice(1, 0, 4, 2);
    at::Tensor x = f->solve(strided, false);
    EXPECT_LT(relative_residual(a, x, strided.contiguous(), false), 1e-12);
  }
}

TEST(BackendValidation, CholeskyAndLdltRefuseNonSymmetricMatrices) {
  const CsrMatrix general = poisson2d(4, 0.25);
  for (const auto& [name, method] : kBackendMethods) {
    if (method == Method::LU) continue;
    SCOPED_TRACE(name + " " + to_string(method));
    EXPECT_THROW(make_direct_backend(name)->factorize(general, method), tessera::InvalidInput);
  }
}

// A cached factorisation keeps solving the matrix it factorised, even when the caller
// changes the values in place afterwards (as an optimiser step would).
TEST(BackendValidation, FactorisationOutlivesInPlaceChangesToTheInput) {
  for (const auto& [name, method] : kBackendMethods) {
    SCOPED_TRACE(name + " " + to_string(method));
    CsrMatrix a = poisson2d(5);
    const CsrMatrix original{a.rows, a.cols, a.row_ptr.clone(), a.col_idx.clone(), a.values.clone()};
    auto f = make_direct_backend(name)->factorize(a, method);
    a.values.mul_(3.0).add_(1.0);
    const at::Tensor b = csr_apply(original, at::ones({a.rows}, at::kDouble), false);
    EXPECT_LT(relative_residual(original, f->solve(b, false), b, false), 1e-13);
    EXPECT_LT(relative_residual(original, f->solve(b, true), b, true), 1e-13);
  }
}

}  // namespace
}  // namespace tessera::sla::testing
#endif
