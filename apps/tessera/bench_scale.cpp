// `tessera bench scale --n N [--dims 3]`: one large 2D (N^2 unknowns) or 3D (N^3) Poisson solve
// with its memory. The matrix is written straight into int32 CSR (no COO at any size), or with
// --matrix-free held as its stencil (poisson2d_stencil / poisson3d_stencil: one byte per row, solved by the stencil solve of
// stencil.h, the same iterates bit for bit); the MemoryLedger records the bytes of every
// phase: matrix, right-hand side, and the peak inside `solve()` (property detection,
// preconditioner set-up, Krylov vectors). One JSON line.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bench_stream.h"
#include "cli_checks.h"
#include "commands.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/preconditioners.h"
#include "tessera/sla/solve.h"
#include "tessera/sla/stencil.h"

namespace tessera::app {
namespace {

struct ScaleBenchOptions {
  int64_t n = 4096;                   // grid side: n^dims unknowns
  int dims = 2;                       // 2D (5-point) or 3D (7-point) Poisson
  std::string preconditioner = "amg";
  double rtol = 1e-6;
  int64_t maxiter = 100000;
  bool setup_alone = false;         // also run the preconditioner set-up alone first (its own peak)
  bool matrix_free = false;         // the matrix as its stencil (no CSR)
};

/// Resident set size of this process in bytes (/proc/self/statm), which also counts what
/// the ledger cannot see (CHOLMOD, hypre, std::vector).
int64_t resident_bytes() {
  std::ifstream f("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * 4096;
}

/// Peak resident set size (VmHWM) in bytes.
int64_t peak_resident_bytes() {
  std::ifstream f("/proc/self/status");
  std::string key;
  while (f >> key) {
    if (key == "VmHWM:") {
      int64_t kb = 0;
      f >> kb;
      return kb * 1024;
    }
  }
  return 0;
}

int run_scale_bench(const ScaleBenchOptions& o) {
  core::MemoryLedger::install();
  const int64_t rows = o.dims == 3 ? o.n * o.n * o.n : o.n * o.n;
  const double dof = static_cast<double>(rows);
  nlohmann::json line = {{"bench", "scale"}, {"dims", o.dims}, {"grid", o.n}, {"dof", rows}, {"rtol", o.rtol},
                         {"method", "cg"}, {"preconditioner", o.preconditioner},
                         {"threads", at::get_num_threads()}, {"load_average_start", load_average()}};
  const int64_t start = core::MemoryLedger::current_bytes();

  auto t0 = std::chrono::steady_clock::now();
  sla::SparseTensor a;
  sla::StencilMatrix stencil;
  if (o.matrix_free) {
    stencil = o.dims == 3 ? sla::poisson3d_stencil(o.n) : sla::poisson2d_stencil(o.n);
  } else {
    a = o.dims == 3 ? sla::poisson3d(o.n) : sla::poisson2d(o.n);
  }
  line["matrix_seconds"] = seconds_since(t0);
  const int64_t matrix_bytes = core::MemoryLedger::current_bytes() - start;
  line["matrix_bytes"] = matrix_bytes;
  line["matrix"] = o.matrix_free ? "stencil" : "csr";
  line["nnz"] = o.matrix_free ? stencil.nnz() : a.nnz();
  if (!o.matrix_free) line["index_dtype"] = a.row_ptr().scalar_type() == at::kInt ? "int32" : "int64";
  line["matrix_peak_bytes"] = core::MemoryLedger::peak_bytes() - start;   // no COO or int64 copy: = matrix_bytes

  at::manual_seed(1);
  const at::Tensor b = at::rand({rows}, at::kDouble);
  sla::SolveOptions so;
  so.backend = sla::Backend::Native;
  so.method = sla::Method::CG;
  so.preconditioner = sla::parse_preconditioner(o.preconditioner);
  so.rtol = o.rtol;
  so.maxiter = o.maxiter;

  if (o.setup_alone && so.preconditioner != sla::Preconditioner::None && so.preconditioner != sla::Preconditioner::Jacobi) {
    // the preconditioner's set-up on its own: its peak and what it holds, to split solve's peak
    const int64_t before = core::MemoryLedger::current_bytes();
    core::MemoryLedger::reset_peak();
    const sla::PreconditionerSetup setup =
        o.matrix_free ? sla::setup_preconditioner(stencil, so) : sla::setup_preconditioner(a, so);
    line["setup_alone_peak_bytes"] = core::MemoryLedger::peak_bytes() - before;
    line["setup_alone_seconds"] = setup.seconds;
    line["setup_summary"] = setup.summary;
  }
  const int64_t before_solve = core::MemoryLedger::current_bytes();
  core::MemoryLedger::reset_peak();
  t0 = std::chrono::steady_clock::now();
  auto [x, info] = o.matrix_free ? sla::solve(stencil, b, so) : sla::solve(a, b, so);
  line["solve_seconds"] = seconds_since(t0);
  const int64_t solve_peak = core::MemoryLedger::peak_bytes() - before_solve;
  line["iterations"] = info.iterations;
  line["residual"] = info.residual;
  line["status"] = sla::to_string(info.status);
  line["solve_peak_bytes"] = solve_peak;                     // above matrix + b
  const int64_t total_peak = before_solve - start + solve_peak;
  line["ledger_peak_bytes"] = total_peak;                    // matrix + b + solve's peak
  line["ledger_bytes_per_dof"] = static_cast<double>(total_peak) / dof;
  line["matrix_bytes_per_dof"] = static_cast<double>(matrix_bytes) / dof;
  line["solve_bytes_per_dof"] = static_cast<double>(solve_peak) / dof;
  line["resident_bytes_end"] = resident_bytes();
  line["peak_resident_bytes"] = peak_resident_bytes();       // whole process, incl. libraries
  line["load_average_end"] = load_average();
  std::cout << line.dump() << std::endl;
  return info.status == sla::SolveStatus::Converged ? 0 : 3;
}

}  // namespace

void add_bench_scale(CLI::App& bench, CommandBody& body) {
  auto o = std::make_shared<ScaleBenchOptions>();
  CLI::App* cmd = bench.add_subcommand("scale", "one large 2D or 3D Poisson CG solve with its memory per unknown");
  cmd->add_option("--n", o->n, "grid side (n^dims unknowns)")->check(kPositive);
  cmd->add_option("--dims", o->dims, "2 (5-point Poisson, default) or 3 (7-point)")->check(CLI::IsMember({2, 3}));
  cmd->add_option("--preconditioner", o->preconditioner, "amg (default), jacobi, none, ...");
  cmd->add_option("--rtol", o->rtol, "relative tolerance")->check(kPositive);
  cmd->add_option("--maxiter", o->maxiter, "iteration cap")->check(kPositive);
  cmd->add_flag("--setup-alone", o->setup_alone, "first time and measure the preconditioner set-up on its own");
  cmd->add_flag("--matrix-free", o->matrix_free,
                "hold the matrix as its stencil (one byte per row, no CSR) and solve it matrix-free");
  add_json_always_on(cmd);
  cmd->callback([o, &body] { body = [o] { return run_scale_bench(*o); }; });
}

}  // namespace tessera::app
