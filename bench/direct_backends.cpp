// Benchmark: factorisation and solve time of every direct backend on 2D Poisson matrices.
//
//   build/bench_direct_backends [m ...]        (default grids 100 200 400; n = m^2)
//
// Prints one JSON line per backend x method x size. factor_seconds includes tessera's
// singularity check (a Hager condition estimate: a handful of extra solves);
// solve_seconds is one solve with one right-hand side; both are the best of `repeats`.
#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/threads.h"
#include "tessera/sla/backends/direct_backend.h"

namespace {

using tessera::sla::CsrMatrix;
using tessera::sla::Method;

// 5-point Laplacian on an m x m grid, Dirichlet: 4 on the diagonal, -1 for each neighbour.
CsrMatrix poisson2d(int64_t m) {
  const int64_t n = m * m;
  std::vector<int64_t> rp(static_cast<size_t>(n + 1), 0), ci;
  std::vector<double> v;
  ci.reserve(static_cast<size_t>(5 * n));
  v.reserve(static_cast<size_t>(5 * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      const int64_t r = i * m + j;
      const std::pair<int64_t, double> row[] = {{r - m, i > 0 ? -1.0 : 0.0}, {r - 1, j > 0 ? -1.0 : 0.0},
                                                {r, 4.0}, {r + 1, j + 1 < m ? -1.0 : 0.0},
                                                {r + m, i + 1 < m ? -1.0 : 0.0}};
      for (const auto& [c, value] : row) {
        if (value == 0.0) continue;
        ci.push_back(c);
        v.push_back(value);
      }
      rp[static_cast<size_t>(r + 1)] = static_cast<int64_t>(ci.size());
    }
  }
  CsrMatrix a;
  a.rows = a.cols = n;
  a.row_ptr = at::tensor(rp, at::kLong);
  a.col_idx = at::tensor(ci, at::kLong);
  a.values = at::tensor(v, at::kDouble);
  return a;
}

// y = A x
at::Tensor apply(const CsrMatrix& a, const at::Tensor& x) {
  at::Tensor y = at::zeros({a.rows}, at::kDouble);
  const auto* rp = a.row_ptr.data_ptr<int64_t>();
  const auto* ci = a.col_idx.data_ptr<int64_t>();
  const auto* v = a.values.data_ptr<double>();
  const auto* xs = x.data_ptr<double>();
  auto* ys = y.data_ptr<double>();
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t p = rp[i]; p < rp[i + 1]; ++p) ys[i] += v[p] * xs[ci[p]];  // y_i += a_ij x_j
  }
  return y;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void run(const CsrMatrix& a, int64_t m, const std::string& name, Method method) {
  auto backend = tessera::sla::make_direct_backend(name);
  const at::Tensor b = apply(a, at::ones({a.rows}, at::kDouble));  // b = A 1
  const int repeats = a.rows <= 40000 ? 3 : 1;
  double factor_best = 1e300, solve_best = 1e300, residual = 0.0;
  std::string status;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    auto f = backend->factorize(a, method);
    factor_best = std::min(factor_best, seconds_since(start));
    status = tessera::sla::to_string(f->status());
    if (f->status() != tessera::sla::SolveStatus::Converged) break;
    start = std::chrono::steady_clock::now();
    at::Tensor x = f->solve(b, false);
    solve_best = std::min(solve_best, seconds_since(start));
    residual = ((apply(a, x) - b).norm() / b.norm()).item<double>();  // ||A x - b|| / ||b||
  }
  std::printf(
      "{\"bench\":\"direct_backends\",\"matrix\":\"poisson2d\",\"grid\":%lld,\"n\":%lld,\"nnz\":%lld,"
      "\"backend\":\"%s\",\"method\":\"%s\",\"status\":\"%s\",\"factor_seconds\":%.6f,"
      "\"solve_seconds\":%.6f,\"residual\":%.3e,\"repeats\":%d}\n",
      static_cast<long long>(m), static_cast<long long>(a.rows),
      static_cast<long long>(a.values.numel()), name.c_str(), tessera::sla::to_string(method),
      status.c_str(), factor_best, solve_best, residual, repeats);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  tessera::core::setup_threads();
  std::vector<int64_t> grids = {100, 200, 400};
  if (argc > 1) {
    grids.clear();
    for (int i = 1; i < argc; ++i) grids.push_back(std::atoll(argv[i]));
  }
  const std::vector<std::pair<std::string, Method>> cases = {
      {"cholmod", Method::Cholesky}, {"eigen", Method::Cholesky}, {"eigen", Method::LDLT},
      {"umfpack", Method::LU},       {"superlu", Method::LU},     {"eigen", Method::LU}};
  for (int64_t m : grids) {
    const CsrMatrix a = poisson2d(m);
    for (const auto& [name, method] : cases) run(a, m, name, method);
  }
  return 0;
}
