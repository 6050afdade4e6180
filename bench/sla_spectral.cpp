// Benchmark: the gradient of logdet by selected inversion against n solves with the
// factorisation, and eigsh on 2D Poisson matrices.
//
//   build/bench_sla_spectral [--eigsh-only] [--backends auto,native,spectra]
//                            [--modes largest,smallest,shift0] [--repeats R] [--ncv M] [m ...]
//   (default grids 50 100; n = m^2; default backends auto,native,spectra, modes all, R = 3)
//
// Prints JSON lines. logdet: forward seconds (CHOLMOD), backward seconds (LDU + Takahashi),
// and the seconds of the naive alternative, (A^{-T})_ij on the pattern from A^{-T} e_j for
// every j (CHOLMOD solves in blocks of 64 columns), with the largest difference between the
// two. eigsh: k = 6, every other option at its default; modes: "largest" (Which::Largest),
// "smallest" (Which::Smallest, Lanczos on A) and "shift0" (Which::Nearest with sigma = 0,
// shift-invert). Best of R runs. bench/sla_spectral_peer.py runs SciPy in the same modes.
#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
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

struct Config {
  bool eigsh_only = false;
  std::vector<std::string> backends = {"auto", "native", "spectra"};
  std::vector<std::string> modes = {"largest", "smallest", "shift0"};
  int repeats = 3;
  int64_t ncv = 0;   // Krylov space size; 0: eigsh's default
  std::vector<int64_t> grids;
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

EigshOptions options_for(const std::string& backend, const std::string& mode, int64_t ncv) {
  EigshOptions o;   // k = 6, tol, block: defaults
  o.backend = parse_eigsh_backend(backend);
  o.ncv = ncv;
  if (mode == "largest") {
    o.which = Which::Largest;
  } else if (mode == "smallest") {
    o.which = Which::Smallest;
  } else if (mode == "shift0") {
    o.which = Which::Nearest;
    o.sigma = 0.0;
  } else {
    std::fprintf(stderr, "unknown mode %s (largest, smallest, shift0)\n", mode.c_str());
    std::exit(2);
  }
  return o;
}

void bench_eigsh(int64_t m, const Config& c) {
  SparseTensor a = poisson2d(m);
  for (const std::string& mode : c.modes) {
    for (const std::string& backend : c.backends) {
      const EigshOptions o = options_for(backend, mode, c.ncv);
      double best = 1e300;
      EigshResult r;
      for (int rep = 0; rep < c.repeats; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        r = eigsh(a, o);
        best = std::min(best, seconds_since(t0));
      }
      std::printf("{\"bench\":\"eigsh\",\"backend\":\"%s\",\"chosen\":\"%s\",\"mode\":\"%s\",\"n\":%lld,"
                  "\"k\":6,\"ncv\":%lld,\"seconds\":%.4f,\"iterations\":%lld,\"operator_applications\":%lld,"
                  "\"shift_invert\":%s,\"sigma\":%.10g,\"max_residual\":%.2e,\"lambda_min\":%.10f,"
                  "\"lambda_max\":%.10f,\"status\":\"%s\"}\n",
                  backend.c_str(), r.info.backend.c_str(), mode.c_str(), static_cast<long long>(a.rows()), static_cast<long long>(c.ncv), best,
                  static_cast<long long>(r.info.iterations), static_cast<long long>(r.info.operator_applications),
                  r.info.shift_invert ? "true" : "false", r.info.sigma, r.info.max_residual, r.eigenvalues[0].item<double>(), r.eigenvalues[5].item<double>(),
                  to_string(r.info.status));
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--eigsh-only") {
      c.eigsh_only = true;
    } else if (arg == "--backends" && i + 1 < argc) {
      c.backends = split(argv[++i]);
    } else if (arg == "--modes" && i + 1 < argc) {
      c.modes = split(argv[++i]);
    } else if (arg == "--repeats" && i + 1 < argc) {
      c.repeats = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--ncv" && i + 1 < argc) {
      c.ncv = std::max(0, std::atoi(argv[++i]));
    } else {
      c.grids.push_back(std::atoll(arg.c_str()));
    }
  }
  if (c.grids.empty()) c.grids = {50, 100};
  for (int64_t m : c.grids) {
    if (!c.eigsh_only) bench_logdet(m);
    bench_eigsh(m, c);
  }
  return 0;
}
