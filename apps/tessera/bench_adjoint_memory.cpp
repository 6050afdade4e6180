// `tessera bench adjoint-memory`: peak memory of forward + backward of a CG solve, by the
// adjoint (one node, one adjoint solve) versus autograd through the unrolled CG loop.
// One JSON line per (mode, iterations); bytes from the MemoryLedger (CPU allocator).

#include <ATen/ATen.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "commands.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/solve.h"

namespace tessera::app {
namespace {

struct AdjointMemoryOptions {
  int64_t grid = 800;                          // n: n² unknowns (640k at 800)
  std::vector<int64_t> adjoint_iterations{10, 100, 1000};
  std::vector<int64_t> unrolled_iterations{10, 30, 100};
};

/// Plain CG for exactly `iterations` steps written with differentiable ops, so autograd
/// records (and keeps) every iteration's vectors.
at::Tensor unrolled_cg(const sla::SparseTensor& a, const at::Tensor& b, int64_t iterations) {
  at::Tensor x = at::zeros_like(b), r = b, p = b;
  at::Tensor rr = at::dot(r, r);
  for (int64_t k = 0; k < iterations; ++k) {
    at::Tensor q = sla::matvec(a, p);                 // q = A p
    at::Tensor alpha = rr / at::dot(p, q);            // α = rᵀr / pᵀA p
    x = x + alpha * p;                                // x += α p
    r = r - alpha * q;                                // r -= α q
    at::Tensor rr_next = at::dot(r, r);
    p = r + (rr_next / rr) * p;                       // p = r + β p
    rr = rr_next;
  }
  return x;
}

/// Peak bytes above the baseline while running forward and backward of one mode.
nlohmann::json measure(const sla::SparseTensor& pattern, const at::Tensor& b0, const at::Tensor& w,
                       const std::string& mode, int64_t iterations) {
  at::Tensor values = pattern.values().detach().clone().requires_grad_();
  at::Tensor b = b0.detach().clone().requires_grad_();
  sla::SparseTensor a = pattern.with_values(values);
  sla::SolveInfo info;
  core::MemoryLedger::reset_peak();
  core::MemoryPhase phase(mode);
  const auto t0 = std::chrono::steady_clock::now();
  at::Tensor x;
  if (mode == "adjoint") {
    sla::SolveOptions options;
    options.backend = sla::Backend::Native;
    options.method = sla::Method::CG;
    options.preconditioner = sla::Preconditioner::None;
    options.rtol = 0.0;                               // run exactly `iterations` steps
    options.maxiter = iterations;
    std::tie(x, info) = sla::solve(a, b, options);
  } else {
    x = unrolled_cg(a, b, iterations);
  }
  const int64_t after_forward = core::MemoryLedger::current_bytes() - phase.baseline_bytes();
  at::Tensor loss = at::dot(w, x);                    // L = wᵀ x
  loss.backward();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  core::PhaseRecord record = phase.finish();
  return {{"bench", "adjoint-memory"}, {"mode", mode}, {"dof", pattern.rows()}, {"iterations", iterations},
          {"peak_increase_bytes", record.peak_increase()}, {"held_after_forward_bytes", after_forward},
          {"vector_bytes", pattern.rows() * 8}, {"seconds", seconds},
          {"grad_values_norm", values.grad().norm().item<double>()}};
}

int run_adjoint_memory(const AdjointMemoryOptions& o) {
  sla::SparseTensor pattern = sla::poisson2d(o.grid);
  at::manual_seed(0);
  at::Tensor b = at::randn({pattern.rows()}, at::kDouble);
  at::Tensor w = at::randn({pattern.rows()}, at::kDouble);
  measure(pattern, b, w, "adjoint", 1);   // warm-up: builds the pattern's one-time caches (A^T's pattern, ...)
  for (int64_t k : o.adjoint_iterations) std::cout << measure(pattern, b, w, "adjoint", k).dump() << std::endl;
  for (int64_t k : o.unrolled_iterations) std::cout << measure(pattern, b, w, "unrolled", k).dump() << std::endl;
  return 0;
}

}  // namespace

void add_bench_adjoint_memory(CLI::App& bench, CommandBody& body) {
  auto options = std::make_shared<AdjointMemoryOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "adjoint-memory", "peak memory of forward+backward of CG: adjoint solve vs autograd through the loop");
  cmd->add_option("--n", options->grid, "grid side: n^2 unknowns")->check(kPositive);
  cmd->add_option("--adjoint-iterations", options->adjoint_iterations, "CG iteration counts, adjoint mode");
  cmd->add_option("--unrolled-iterations", options->unrolled_iterations,
                  "CG iteration counts, unrolled mode (memory grows with each)");
  cmd->callback([&body, options]() { body = [options]() { return run_adjoint_memory(*options); }; });
}

}  // namespace tessera::app
