// Inverse problem by differentiating through a sparse solve: recover the conductivity
// κ(x, y) = 1 + 0.5 sin 2πx sin 2πy of -∇·(κ∇u) = 1 on a 64 x 64 cell grid from u alone.
// κ = softplus(θ), one θ per cell, Adam on the relative H¹ misfit; every step
// is one forward solve and one adjoint solve (see tessera/sla/inverse_conductivity.h).

#include <ATen/ATen.h>

#include <cstdio>

#include "tessera/core/threads.h"
#include "tessera/sla/inverse_conductivity.h"

int main() {
  using namespace tessera::sla;
  tessera::core::setup_threads(1);     // 4096 unknowns: one thread beats a parallel region's overhead
  InverseConductivityOptions options;   // 64 x 64 cells, one θ per cell, Adam lr 0.02, 3000 steps
  std::printf("recovering kappa on a %lld x %lld cell grid, one parameter per cell\n",
              static_cast<long long>(options.grid), static_cast<long long>(options.grid));
  auto progress = [](const InverseConductivityStep& s) {
    if (s.step % 250 == 0)
      std::printf("  step %4lld  misfit %.3e  |kappa - kappa*|/|kappa*| %.3e  |u - u_obs|/|u_obs| %.3e  %.1f s\n",
                  static_cast<long long>(s.step), s.misfit, s.kappa_error, s.u_error, s.seconds);
  };
  InverseConductivityResult r = fit_conductivity(options, progress);
  std::printf("stopped after %lld steps (%s) in %.1f s; best iterate: step %lld; solver %s/%s\n",
              static_cast<long long>(r.steps), r.stop_reason.c_str(), r.seconds, static_cast<long long>(r.last.step),
              r.solve_info.backend.c_str(), to_string(r.solve_info.method));
  std::printf("relative L2 error: kappa %.3e (%.3f%%), u %.3e\n", r.last.kappa_error, 100 * r.last.kappa_error,
              r.last.u_error);
  return r.stop_reason == "solve_failed" ? 3 : 0;
}
