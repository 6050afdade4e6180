// Benchmark: the gradient of logdet by selected inversion against n solves with the
// factorisation, and eigsh (native block Lanczos, Spectra) on 2D Poisson matrices.
//
//   build/bench_sla_spectral [m ...]        (default grids 50 100; n = m^2)
//
// Prints JSON lines. logdet: forward seconds (CHOLMOD), backward seconds (LDU + Takahashi),
// and the seconds of the naive alternative, (A^{-T})_ij on the pattern from A^{-T} e_j for
// every j (CHOLMOD solves in blocks of 64 columns), with the largest difference between the
// two. eigsh: 6 smallest (shift-invert at 0) and 6 largest eigenvalues per backend, best of 3.
#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessera/sla/backends/direct_backend.h"
#include "tessera/sla/determinant.h"
#include "tessera/sla/eigsh.h"
#include "tessera/sla/generators.h"

namespace {

using namespace tessera::sla;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// (A^{-T})_ij on the pattern from n solves (blocks of 64 right-hand sides).
at::Tensor inverse_by_solves(const SparseTensor& a) {
  const int64_t n = a.rows();
  auto factor = make_direct_backend("cholmod")->factorize(a.to_csr_matrix(), Method::Cholesky);
  at::Tensor rows = a.row_indices(), cols = a.col_idx().to(at::kLong);
  at::Tensor out = at::zeros({a.nnz()}, at::kDouble);
  for (int64_t j0 = 0; j0 < n; j0 += 64) {
    const int64_t w = std::min<int64_t>(64, n - j0);
    at::Tensor e = at::zeros({n, w}, at::kDouble);
    e.narrow(0, j0, w).copy_(at::eye(w, at::kDouble));
    at::Tensor x = factor->solve(e, /*transpose=*/true);   // columns j0.. of A^{-T}
    at::Tensor in_block = (cols >= j0) & (cols < j0 + w);
    at::Tensor idx = in_block.nonzero().flatten();
    out.index_put_({idx}, x.index({rows.index_select(0, idx), cols.index_select(0, idx) - j0}));
  }
  return out;
}

void bench_logdet(int64_t m) {
  SparseTensor a = poisson2d(m);
  at::Tensor v = a.values().clone().requires_grad_();
  auto t0 = std::chrono::steady_clock::now();
  auto [ld, info] = logdet(a.with_values(v));
  const double fwd = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  ld.backward();
  const double bwd = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  at::Tensor naive = inverse_by_solves(a);
  const double solves = seconds_since(t0);
  const double diff = (naive - v.grad()).abs().max().item<double>();
  std::printf("{\"bench\":\"logdet_grad\",\"n\":%lld,\"nnz\":%lld,\"forward_seconds\":%.4f,"
              "\"selected_inversion_seconds\":%.4f,\"n_solves_seconds\":%.4f,\"max_abs_diff\":%.2e}\n",
              static_cast<long long>(a.rows()), static_cast<long long>(a.nnz()), fwd, bwd, solves, diff);
}

void bench_eigsh(int64_t m) {
  SparseTensor a = poisson2d(m);
  for (EigshBackend backend : {EigshBackend::Native, EigshBackend::Spectra}) {
    for (Which which : {Which::Smallest, Which::Largest}) {
      EigshOptions o;
      o.k = 6;
      o.backend = backend;
      o.which = which == Which::Smallest ? Which::Nearest : Which::Largest;   // smallest by shift-invert at 0
      o.sigma = 0.0;
      double best = 1e300;
      EigshResult r;
      for (int rep = 0; rep < 3; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        r = eigsh(a, o);
        best = std::min(best, seconds_since(t0));
      }
      std::printf("{\"bench\":\"eigsh\",\"backend\":\"%s\",\"which\":\"%s\",\"n\":%lld,\"k\":6,\"seconds\":%.4f,"
                  "\"operator_applications\":%lld,\"max_residual\":%.2e,\"lambda_min\":%.10f,\"status\":\"%s\"}\n",
                  r.info.backend.c_str(), which == Which::Smallest ? "smallest (shift-invert 0)" : "largest",
                  static_cast<long long>(a.rows()), best, static_cast<long long>(r.info.operator_applications),
                  r.info.max_residual, r.eigenvalues[0].item<double>(), to_string(r.info.status));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> grids;
  for (int i = 1; i < argc; ++i) grids.push_back(std::atoll(argv[i]));
  if (grids.empty()) grids = {50, 100};
  for (int64_t m : grids) {
    bench_logdet(m);
    bench_eigsh(m);
  }
  return 0;
}
