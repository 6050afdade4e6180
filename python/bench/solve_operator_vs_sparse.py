"""Benchmark: a matrix-free operator in Python through sla.solve_operator against the sparse
native CG on the assembled matrix.

The operator is diffusion2d(kappa)'s finite-volume -div(kappa grad u) on an n x n grid,
applied from kappa with torch operations (never assembled); kappa = 10^(sin 6x cos 4y)
spans two orders of magnitude. CG to rtol 1e-10 without and with a Jacobi hook
(r -> r / diag A), b = 1; the peer is A.solve(b, backend="native", method="cg") on
sla.diffusion2d(kappa) with the same preconditioner. Prints one JSON line per (n,
preconditioner): iterations and seconds of both (the solve_operator forward, and its
backward: one adjoint CG and one vector-Jacobian product in kappa), and the relative
difference of the solutions.

    PYTHONPATH=build/python /usr/bin/python3 python/bench/solve_operator_vs_sparse.py --n 32 64 128
"""

import argparse
import json
import time

import torch

from tessera import sla

D = torch.float64


def diffusion_apply(x, kappa):
    """(A x)_i = (1/h^2) sum_faces T_f (x_i - x_neighbour), T_f the harmonic mean of the two
    cells' kappa, 2 kappa_i on a boundary face (as sla.diffusion2d)."""
    n = kappa.shape[0]
    u = x.reshape(n, n)
    kx = 2 * kappa[:, :-1] * kappa[:, 1:] / (kappa[:, :-1] + kappa[:, 1:])
    ky = 2 * kappa[:-1, :] * kappa[1:, :] / (kappa[:-1, :] + kappa[1:, :])
    fx = kx * (u[:, :-1] - u[:, 1:])
    fy = ky * (u[:-1, :] - u[1:, :])
    pad = torch.nn.functional.pad
    idx = torch.arange(n, dtype=x.dtype)
    edge = (idx == 0).to(x.dtype) + (idx == n - 1).to(x.dtype)
    boundary = edge.view(1, n) + edge.view(n, 1)
    y = pad(fx, (0, 1)) - pad(fx, (1, 0)) + pad(fy, (0, 0, 0, 1)) - pad(fy, (0, 0, 1, 0)) + 2 * kappa * boundary * u
    return (n * n * y).reshape(-1)


def run(n, preconditioner):
    r = torch.arange(n, dtype=D).view(n, 1) / n
    c = torch.arange(n, dtype=D).view(1, n) / n
    kappa = (10.0 ** (torch.sin(6 * r) * torch.cos(4 * c))).requires_grad_()
    a = sla.diffusion2d(kappa.detach())
    b = torch.ones(n * n, dtype=D)
    inv_diag = 1.0 / a.diagonal()
    hook = (lambda q: q * inv_diag) if preconditioner == "jacobi" else None
    t0 = time.perf_counter()
    x, info = sla.solve_operator(diffusion_apply, b, kappa, symmetric=True, preconditioner=hook, rtol=1e-10,
                                 maxiter=100000, return_info=True)
    t1 = time.perf_counter()
    x.sum().backward()
    t2 = time.perf_counter()
    xs, sparse = a.solve(b, backend="native", method="cg", preconditioner=preconditioner, rtol=1e-10,
                         maxiter=100000, return_info=True)
    t3 = time.perf_counter()
    return {"n": n * n, "preconditioner": preconditioner, "operator_iterations": info.iterations,
            "operator_seconds": round(t1 - t0, 4), "operator_backward_seconds": round(t2 - t1, 4),
            "sparse_iterations": sparse.iterations, "sparse_seconds": round(t3 - t2, 4),
            "relative_difference": float((x.detach() - xs).norm() / xs.norm())}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[32, 64, 128], help="grid sides")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for n in args.n:
        for preconditioner in ("none", "jacobi"):
            print(json.dumps(run(n, preconditioner)), flush=True)


if __name__ == "__main__":
    main()
