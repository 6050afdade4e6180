// Benchmark: the distributed sla API (deigsh, dlogdet, dnonlinear_solve, batched solve) at
// the rank count it is started with, and the one-process functions (eigsh, logdet,
// nonlinear_solve, batched solve) when it runs on one rank.
//
//   mpirun -np P build/bench_dist_api [--repeats R] [m ...]     (default m = 100, R = 3)
//   bench/dist_api.sh [BUILD_DIR] runs it at 1, 2 and 4 ranks.
//
// Matrices: 2D Poisson on an m x m grid (n = m^2), contiguous rows. Prints one JSON line per
// operation: "api" (distributed or one_process), "operation", ranks, n, the best of R
// seconds (the slowest rank's, each run after a barrier) and what the run did:
//  - eigsh_largest: k = 6 largest eigenvalues, native block Lanczos (eigsh: backend native);
//  - eigsh_shift_invert: k = 6 nearest sigma = 0 (distributed: MUMPS; one process: auto);
//  - logdet: log det A and its gradient (distributed: MUMPS LU and selected inversion; one
//    process: auto);
//  - nonlinear_solve: A u + u^3 = b by Newton to rtol 1e-10, the Jacobian coloured on A's
//    pattern, linear steps by MUMPS (distributed) or auto (one process), and the gradient
//    of sum(u) with respect to the coefficient of u^3;
//  - batched_solve: 4 value vectors on A's pattern (A scaled by 1, 2, 3, 4), solved by
//    dsolve's / solve's auto backend.
#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tessera/dist/communicator.h"
#include "tessera/sla/determinant.h"
#include "tessera/sla/dist/deigsh.h"
#include "tessera/sla/dist/dlogdet.h"
#include "tessera/sla/dist/dnonlinear_solve.h"
#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/dist/dsparse_tensor_batch.h"
#include "tessera/sla/eigsh.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/nonlinear_solve.h"
#include "tessera/sla/solve.h"

namespace {

using namespace tessera::sla;
using Comm = std::shared_ptr<tessera::dist::Communicator>;

/// Best of `repeats` runs of `work`, each the slowest rank's seconds (a barrier before each).
double best_seconds(const Comm& comm, int repeats, const std::function<void()>& work) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    comm->barrier();
    const auto t0 = std::chrono::steady_clock::now();
    work();
    at::Tensor s = at::full({1}, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                            at::kDouble);
    comm->all_reduce(s, tessera::dist::ReduceOp::Max);
    best = std::min(best, s.item<double>());
  }
  return best;
}

void report(const Comm& comm, const char* api, const char* operation, int64_t n, double seconds,
            const std::string& detail) {
  if (comm->rank() != 0) return;
  std::printf("{\"api\":\"%s\",\"operation\":\"%s\",\"ranks\":%d,\"n\":%lld,\"seconds\":%.4f%s}\n", api, operation,
              comm->size(), static_cast<long long>(n), seconds, detail.c_str());
  std::fflush(stdout);
}

/// k = 6, native block Lanczos: the largest, or (shift-invert) the nearest to sigma = 0.
EigshOptions eigsh_options(bool nearest) {
  EigshOptions o;
  o.k = 6;
  o.backend = EigshBackend::Native;
  if (nearest) {
    o.which = Which::Nearest;
    o.sigma = 0.0;
  }
  return o;
}

SparseTensor batch_of_four(const SparseTensor& a) {
  at::Tensor scales = at::arange(1, 5, at::kDouble).unsqueeze(1);   // A_b = b A, b = 1..4
  return a.with_values(scales * a.values().unsqueeze(0));
}

void distributed(const Comm& comm, int64_t m, int repeats) {
  const SparseTensor a = poisson2d(m);
  const int64_t n = a.rows();
  const RowPartition part = RowPartition::contiguous(n, comm->size());
  const DSparseTensor d = DSparseTensor::from_global(comm, part, a);
  report(comm, "distributed", "eigsh_largest", n, best_seconds(comm, repeats, [&] { deigsh(d, eigsh_options(false)); }), "");
  report(comm, "distributed", "eigsh_shift_invert", n, best_seconds(comm, repeats, [&] { deigsh(d, eigsh_options(true)); }), "");
  report(comm, "distributed", "logdet", n, best_seconds(comm, repeats, [&] {
           at::Tensor v = d.values().detach().clone().set_requires_grad(true);
           dlogdet(d.with_values(v)).first.backward();
         }), "");
  const at::Tensor b = d.scatter(at::ones({n}, at::kDouble));
  NonlinearOptions nl;
  nl.linear.backend = Backend::Mumps;
  int64_t newton = 0;
  double seconds = best_seconds(comm, repeats, [&] {
           at::Tensor theta = at::ones({1}, at::kDouble).set_requires_grad(true);
           auto residual = [&](const at::Tensor& u, const std::vector<at::Tensor>& p) {
             return d.matvec(u) + p[0] * u.pow(3) - b;   // F(u) = A u + θ u^3 - b
           };
           auto [u, info] = dnonlinear_solve(residual, at::zeros({d.owned_rows()}, at::kDouble), {theta}, d, nl);
           u.sum().backward();
           newton = info.iterations;
         });
  report(comm, "distributed", "nonlinear_solve", n, seconds, ",\"newton_iterations\":" + std::to_string(newton));
  const DSparseTensorBatch batch = DSparseTensorBatch::from_global(comm, part, batch_of_four(a));
  const at::Tensor bb = at::stack({b, b, b, b}, 0);
  std::string backend;
  seconds = best_seconds(comm, repeats, [&] { backend = batch.solve(bb).second[0].backend; });
  report(comm, "distributed", "batched_solve", n, seconds, ",\"batch\":4,\"backend\":\"" + backend + "\"");
}

void one_process(const Comm& comm, int64_t m, int repeats) {
  const SparseTensor a = poisson2d(m);
  const int64_t n = a.rows();
  report(comm, "one_process", "eigsh_largest", n, best_seconds(comm, repeats, [&] { eigsh(a, eigsh_options(false)); }), "");
  report(comm, "one_process", "eigsh_shift_invert", n, best_seconds(comm, repeats, [&] { eigsh(a, eigsh_options(true)); }), "");
  report(comm, "one_process", "logdet", n, best_seconds(comm, repeats, [&] {
           at::Tensor v = a.values().clone().set_requires_grad(true);
           logdet(a.with_values(v)).first.backward();
         }), "");
  const at::Tensor b = at::ones({n}, at::kDouble);
  NonlinearOptions nl;
  nl.jacobian_pattern = a;
  int64_t newton = 0;
  double seconds = best_seconds(comm, repeats, [&] {
           at::Tensor theta = at::ones({1}, at::kDouble).set_requires_grad(true);
           auto residual = [&](const at::Tensor& u, const std::vector<at::Tensor>& p) {
             return matvec(a, u) + p[0] * u.pow(3) - b;   // F(u) = A u + θ u^3 - b
           };
           auto [u, info] = nonlinear_solve(residual, at::zeros({n}, at::kDouble), {theta}, nl);
           u.sum().backward();
           newton = info.iterations;
         });
  report(comm, "one_process", "nonlinear_solve", n, seconds, ",\"newton_iterations\":" + std::to_string(newton));
  const SparseTensor batch = batch_of_four(a);
  std::string backend;
  seconds = best_seconds(comm, repeats, [&] { backend = solve(batch, at::ones({4, n}, at::kDouble)).second.backend; });
  report(comm, "one_process", "batched_solve", n, seconds, ",\"batch\":4,\"backend\":\"" + backend + "\"");
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 3;
  std::vector<int64_t> grids;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--repeats" && i + 1 < argc) {
      repeats = std::atoi(argv[++i]);
    } else {
      grids.push_back(std::atoll(argv[i]));
    }
  }
  if (grids.empty()) grids = {100};
  Comm comm = tessera::dist::world();
  for (int64_t m : grids) {
    distributed(comm, m, repeats);
    if (comm->size() == 1) one_process(comm, m, repeats);
  }
  tessera::dist::finalize();
  return 0;
}
