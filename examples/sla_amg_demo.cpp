// Preconditioned Krylov solves with tessera's own set-up preconditioners:
//   AMG-CG and CG + Jacobi on 2D Poisson, CG + IC(0), GMRES + ILU(0) on convection-diffusion.
// Usage: example_sla_amg_demo [N]   (N x N grid, default 256)

#include <ATen/ATen.h>

#include <chrono>
#include <cstdlib>
#include <iostream>

#include "tessera/sla/generators.h"
#include "tessera/sla/solve.h"

namespace sla = tessera::sla;

void report(const char* name, const sla::SparseTensor& a, sla::Method method, sla::Preconditioner pc) {
  const at::Tensor b = at::ones({a.rows()}, at::kDouble);
  sla::SolveOptions o;
  o.backend = sla::Backend::Native;
  o.method = method;
  o.preconditioner = pc;
  o.rtol = 1e-8;
  const auto t0 = std::chrono::steady_clock::now();
  auto [x, info] = sla::solve(a, b, o);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << name << ": " << sla::to_string(method) << " + " << sla::to_string(pc) << "  "
            << sla::to_string(info.status) << " in " << info.iterations << " iterations, residual "
            << info.residual << ", " << s << " s\n";
}

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 256;
  const auto poisson = sla::poisson2d(n);
  std::cout << "2D Poisson, " << poisson.rows() << " unknowns\n";
  report("poisson2d", poisson, sla::Method::CG, sla::Preconditioner::AMG);
  report("poisson2d", poisson, sla::Method::CG, sla::Preconditioner::Jacobi);
  report("poisson2d", poisson, sla::Method::CG, sla::Preconditioner::IC0);
  const auto conv = sla::convection_diffusion2d(n, 200.0, 100.0);
  report("convection_diffusion2d", conv, sla::Method::GMRES, sla::Preconditioner::ILU0);
  report("convection_diffusion2d", conv, sla::Method::GMRES, sla::Preconditioner::Jacobi);
  return 0;
}
