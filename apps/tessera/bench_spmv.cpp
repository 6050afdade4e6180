// `tessera bench spmv`: y = A x on a generated matrix (2D Poisson, or one that is not a
// stencil: variable-coefficient diffusion, the P1 finite-element Laplacian) in each storage
// form, against the STREAM triad measured in the same program; with --rounds R the triad and
// every form are measured R times in turn (an A/B on a shared machine). One JSON line per form:
// bandwidth_gbs = bytes_per_spmv / median seconds, where bytes_per_spmv counts the matrix
// data once (12 bytes per nonzero for float64 values + int32 indices, 16 with int64, 8 with
// float32 values; one byte per row for the stencil form; 12 per stored entry, padding
// included, for SELL-C-σ) and 16 bytes per row (x and y). csr_equivalent_gbs counts the CSR
// bytes of the matrix over the same time, so forms compare on it.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_stream.h"
#include "cli_checks.h"
#include "commands.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/prepared_matvec.h"

namespace tessera::app {
namespace {

struct SpmvBenchOptions {
  int64_t grid = 1000;   // n: n^2 rows
  int repeats = 5;       // timed batches; the median batch is reported
  int products = 0;      // products per batch (0: ~0.2 s worth)
  std::string formats = "csr,stencil,csr-f32values,csr-int64";
  std::string matrix = "poisson2d";
  int rounds = 1;        // triad and every form, measured this many times in turn
};

sla::SparseTensor make_matrix(const std::string& name, int64_t grid) {
  if (name == "poisson2d") return sla::poisson2d(grid);
  if (name == "diffusion2d") return sla::variable_diffusion2d(grid, {1.0, 7});
  if (name == "fe2d") return sla::fe_laplacian2d(grid, {0.3, true, 7});
  throw CLI::ValidationError("--matrix", "unknown matrix '" + name + "' (poisson2d, diffusion2d, fe2d)");
}

sla::SpmvFormat parse_format(const std::string& name) {
  if (name == "csr") return sla::SpmvFormat::Csr;
  if (name == "stencil") return sla::SpmvFormat::Stencil;
  if (name == "csr-f32values") return sla::SpmvFormat::CsrFloat32Values;
  if (name == "csr-int64") return sla::SpmvFormat::CsrInt64;
  if (name == "sell") return sla::SpmvFormat::Sell;
  if (name == "sell-sym") return sla::SpmvFormat::SellSymmetric;
  if (name == "auto") return sla::SpmvFormat::Auto;
  throw CLI::ValidationError("--formats",
                             "unknown format '" + name + "' (csr, stencil, csr-f32values, csr-int64, sell, sell-sym, auto)");
}

int run_spmv_bench(const SpmvBenchOptions& o) {
  auto t_build = std::chrono::steady_clock::now();
  const sla::SparseTensor a = make_matrix(o.matrix, o.grid);
  const double build_seconds = seconds_since(t_build);
  at::manual_seed(0);
  at::Tensor x = at::randn({a.cols()}, at::kDouble), y = at::empty({a.rows()}, at::kDouble);
  std::vector<std::string> names;
  std::vector<std::unique_ptr<sla::PreparedMatvec>> ops;
  std::vector<double> plan_seconds;
  std::stringstream list(o.formats);
  for (std::string name; std::getline(list, name, ',');) {
    auto t_plan = std::chrono::steady_clock::now();
    ops.push_back(std::make_unique<sla::PreparedMatvec>(a, parse_format(name)));
    plan_seconds.push_back(seconds_since(t_plan));
    names.push_back(name);
  }
  for (int round = 0; round < o.rounds; ++round) {
    const double stream = stream_triad_gbs();
    for (size_t f = 0; f < ops.size(); ++f) {
      const sla::PreparedMatvec& op = *ops[f];
      const std::string& name = names[f];
      op.apply(x, y);                                                   // warm-up (and first touch)
      int products = o.products;
      if (products <= 0) {
        auto t0 = std::chrono::steady_clock::now();
        op.apply(x, y);
        products = static_cast<int>(std::max(10.0, 0.2 / std::max(seconds_since(t0), 1e-7)));   // >= 10: two products per batch gave 2x-slow outliers at 16M
      }
      std::vector<double> per_product;
      for (int r = 0; r < o.repeats; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < products; ++k) op.apply(x, y);              // y = A x
        per_product.push_back(seconds_since(t0) / products);
      }
      const double t = median(per_product);
      const double bytes = op.bytes_per_apply();
      nlohmann::json line = {{"bench", "spmv"},
                             {"matrix", o.matrix},
                             {"round", round},
                             {"loadavg_1min", load_average()},
                             {"format", name},
                             {"kernel", op.format_name()},
                             {"grid", o.grid},
                             {"rows", a.rows()},
                             {"nnz", a.nnz()},
                             {"threads", op.threads()},
                             {"seconds_per_spmv_median", t},
                             {"bytes_per_spmv", bytes},
                             {"bandwidth_gbs", bytes / t / 1e9},
                             {"stream_gbs", stream},
                             {"fraction_of_stream", bytes / t / 1e9 / stream},
                             {"csr_equivalent_gbs", (12.0 * a.nnz() + 16.0 * a.rows()) / t / 1e9},
                             {"csr_equivalent_fraction_of_stream", (12.0 * a.nnz() + 16.0 * a.rows()) / t / 1e9 / stream},
                             {"gflops", 2.0 * a.nnz() / t / 1e9},
                             {"products_per_batch", products},
                             {"plan_seconds", plan_seconds[f]},
                             {"matrix_build_seconds", build_seconds}};
      std::cout << line.dump() << std::endl;
    }
  }
  return 0;
}

}  // namespace

void add_bench_spmv(CLI::App& bench, CommandBody& body) {
  auto o = std::make_shared<SpmvBenchOptions>();
  CLI::App* cmd = bench.add_subcommand("spmv", "SpMV on a generated matrix vs the STREAM triad of this program");
  cmd->add_option("--n", o->grid, "grid size n (n^2 rows; 4000 = 16M rows)")->check(kPositive);
  cmd->add_option("--matrix", o->matrix, "poisson2d, diffusion2d (log-normal kappa, sigma 1) or fe2d (P1 FE, jitter 0.3)");
  cmd->add_option("--rounds", o->rounds, "triad and every form measured this many times in turn")->check(kPositive);
  cmd->add_option("--repeats", o->repeats, "timed batches (median reported)")->check(kPositive);
  cmd->add_option("--products", o->products, "products per batch (0: about 0.2 s, at least 10)")->check(kNonNegative);
  cmd->add_option("--formats", o->formats, "comma-separated: csr, stencil, csr-f32values, csr-int64, sell, sell-sym, auto");
  add_json_always_on(cmd);
  cmd->callback([o, &body] { body = [o] { return run_spmv_bench(*o); }; });
}

}  // namespace tessera::app
