"""A small neural network trained through tessera's sparse solve.

A multilayer perceptron maps the cell centres (x, y) of an n x n mesh to a conductivity
κ = softplus(MLP(x, y)); the finite-volume operator diffusion2d(κ) is solved for
u = A(κ)^{-1} 1, and the network's weights are trained with torch.optim.Adam so that u
matches the solution for κ* = 1 + 0.5 sin 2πx sin 2πy (relative H¹ misfit, as in
inverse_conductivity.py). Gradients reach the weights through the solve's adjoint.
Prints one JSON line.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/mesh_mlp_training.py --n 32 --steps 1500
"""

import argparse
import json
import math
import time

import torch

from tessera import sla


def h1_squared(z):
    return (z[1:] - z[:-1]).square().sum() + (z[:, 1:] - z[:, :-1]).square().sum()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=32, help="mesh side (n x n cells)")
    p.add_argument("--steps", type=int, default=1500, help="Adam steps")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--width", type=int, default=32, help="hidden units per layer")
    p.add_argument("--target-ratio", type=float, default=0.01,
                   help="pass when the best misfit is below this fraction of the first (exit 1 if not)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    a = p.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)

    torch.manual_seed(0)
    n = a.n
    c = (torch.arange(n, dtype=torch.float64) + 0.5) / n
    yy, xx = torch.meshgrid(c, c, indexing="ij")
    coords = torch.stack([xx.flatten(), yy.flatten()], dim=1)
    kappa_true = (1 + 0.5 * torch.sin(2 * math.pi * yy) * torch.sin(2 * math.pi * xx))
    f = torch.ones(n * n, dtype=torch.float64)
    u_obs = sla.diffusion2d(kappa_true).solve(f).view(n, n)
    obs = h1_squared(u_obs)

    net = torch.nn.Sequential(torch.nn.Linear(2, a.width), torch.nn.Tanh(), torch.nn.Linear(a.width, a.width),
                              torch.nn.Tanh(), torch.nn.Linear(a.width, 1)).double()
    opt = torch.optim.Adam(net.parameters(), lr=a.lr)
    start = time.perf_counter()
    first = None
    best = None
    for step in range(a.steps):
        opt.zero_grad()
        kappa = torch.nn.functional.softplus(net(coords)).view(n, n)
        u, info = sla.diffusion2d(kappa).solve(f, return_info=True)
        misfit = h1_squared(u.view(n, n) - u_obs) / obs
        misfit.backward()
        m = float(misfit)
        first = m if first is None else first
        if best is None or m < best[0]:
            best = (m, float((kappa.detach() - kappa_true).norm() / kappa_true.norm()), step)
        opt.step()
    print(json.dumps({"example": "mesh_mlp_training", "grid": n, "steps": a.steps, "parameters":
                      sum(p.numel() for p in net.parameters()), "first_misfit": first, "best_misfit": best[0],
                      "best_step": best[2], "kappa_error_at_best": best[1], "seconds": time.perf_counter() - start,
                      "backend": info.backend}))
    return 0 if best[0] < a.target_ratio * first else 1


if __name__ == "__main__":
    raise SystemExit(main())
