"""Inverse conductivity problem with torch.optim.Adam, through tessera's differentiable solve.

The problem of tessera::sla::fit_conductivity (include/tessera/sla/inverse_conductivity.h),
written in Python: recover κ(x, y) of -∇·(κ ∇u) = 1 on the unit square (u = 0 on the
boundary) from u. Truth κ* = 1 + 0.5 sin 2πx sin 2πy at the cell centres of an n x n grid;
data u_obs = A(κ*)^{-1} 1. Unknown: θ per cell, κ = softplus(θ), start κ ≡ 1. Misfit: the
relative discrete H¹ seminorm of u(κ) - u_obs. Each step: one forward solve and one adjoint
solve (loss.backward()), then torch.optim.Adam. The iterate of lowest misfit is reported.
Prints one JSON line (and one per --report-every steps).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/inverse_conductivity.py --n 64 --time-limit 60
"""

import argparse
import json
import math
import time

import torch

from tessera import sla


def true_conductivity(n):
    c = (torch.arange(n, dtype=torch.float64) + 0.5) / n
    s = torch.sin(2 * math.pi * c)
    return 1 + 0.5 * s.view(n, 1) * s.view(1, n)


def h1_squared(z):
    return (z[1:] - z[:-1]).square().sum() + (z[:, 1:] - z[:, :-1]).square().sum()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=64, help="grid side (n x n cells)")
    p.add_argument("--steps", type=int, default=3000, help="maximum Adam steps")
    p.add_argument("--lr", type=float, default=0.02, help="Adam step size")
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds")
    p.add_argument("--report-every", type=int, default=0, help="print every k-th step (0: summary only)")
    p.add_argument("--target", type=float, default=0.0023, help="kappa relative error to meet (exit 1 if not)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    a = p.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)

    n = a.n
    kappa_true = true_conductivity(n)
    f = torch.ones(n * n, dtype=torch.float64)
    u_obs = sla.diffusion2d(kappa_true).solve(f).view(n, n)
    obs_h1 = h1_squared(u_obs)

    theta = torch.full((n, n), math.log(math.e - 1), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([theta], lr=a.lr)
    best = None
    start = time.perf_counter()
    stop = "max_steps"
    for step in range(a.steps):
        opt.zero_grad()
        kappa = torch.nn.functional.softplus(theta)
        u, info = sla.diffusion2d(kappa).solve(f, return_info=True)
        if not info.converged:
            stop = "solve_failed"
            break
        misfit = h1_squared(u.view(n, n) - u_obs) / obs_h1
        misfit.backward()
        seconds = time.perf_counter() - start
        m = float(misfit)
        if best is None or m < best["misfit"]:
            kerr = float((kappa.detach() - kappa_true).norm() / kappa_true.norm())
            best = {"step": step, "misfit": m, "kappa_error": kerr, "seconds": seconds}
        if a.report_every and step % a.report_every == 0:
            print(json.dumps({"step": step, "misfit": m, "best_kappa_error": best["kappa_error"],
                              "seconds": seconds}), flush=True)
        if seconds > a.time_limit:
            stop = "time_limit"
            break
        opt.step()
    total = time.perf_counter() - start
    print(json.dumps({"example": "inverse_conductivity", "grid": n, "steps": step + 1, "stop_reason": stop,
                      "best_step": best["step"], "misfit": best["misfit"], "kappa_error": best["kappa_error"],
                      "best_seconds": best["seconds"], "seconds": total, "backend": info.backend,
                      "threads": torch.get_num_threads()}))
    return 0 if best["kappa_error"] <= a.target else 1


if __name__ == "__main__":
    raise SystemExit(main())
