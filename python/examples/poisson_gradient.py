"""Poisson solve with its gradient, from Python.

Solves -Δu = f on an n x n grid (5-point Laplacian, Dirichlet) with tessera, takes the
gradient of J = ||u||² with respect to the matrix values and to f by loss.backward(), and
checks both against central finite differences in a few random directions.
Prints one JSON line.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/poisson_gradient.py --n 256
"""

import argparse
import json
import time

import torch

from tessera import sla


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=256, help="grid side (n^2 unknowns)")
    p.add_argument("--backend", default="auto", help="solve backend (auto, native, cholmod, ...)")
    p.add_argument("--method", default="auto", help="solve method (auto, cg, cholesky, ...)")
    p.add_argument("--directions", type=int, default=3, help="finite-difference directions checked")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    a = p.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)

    torch.manual_seed(0)
    A = sla.poisson2d(a.n)
    values = A.values.clone().requires_grad_()
    f = torch.rand(A.shape[0], dtype=torch.float64, requires_grad=True)

    def J(values, f):
        u = A.with_values(values).solve(f, backend=a.backend, method=a.method, rtol=1e-12)
        return u.square().sum()

    t0 = time.perf_counter()
    u, info = A.with_values(values).solve(f, backend=a.backend, method=a.method, rtol=1e-12, return_info=True)
    t_solve = time.perf_counter() - t0
    t0 = time.perf_counter()
    u.square().sum().backward()
    t_backward = time.perf_counter() - t0

    # directional derivatives: gradient . d against (J(x + h d) - J(x - h d)) / 2h
    worst = 0.0
    with torch.no_grad():
        for _ in range(a.directions):
            dv = torch.randn_like(values) * (values.abs() > 0)
            df = torch.randn_like(f)
            h = 1e-6
            fd = (J(values + h * dv, f + h * df) - J(values - h * dv, f - h * df)) / (2 * h)
            ad = (values.grad * dv).sum() + (f.grad * df).sum()
            worst = max(worst, abs(float(fd - ad)) / abs(float(fd)))
    print(json.dumps({"example": "poisson_gradient", "dof": A.shape[0], "backend": info.backend,
                      "method": info.method, "status": info.status, "residual": info.residual,
                      "solve_seconds": t_solve, "backward_seconds": t_backward,
                      "gradient_fd_relative_error": worst}))
    return 0 if info.converged and worst < 1e-5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
