#!/usr/bin/python3
"""Peers of `tessera bench cg|direct`: SciPy CG (plain, or with the Jacobi preconditioner:
scipy-cg-jacobi), a CG over torch sparse CSR tensors and SciPy spsolve on the same 2D
Poisson matrix (5-point, Dirichlet, diagonal 4, lexicographic), or with --matrix on one of
tessera's generated matrices (taken from tessera's Python module, PYTHONPATH=build/python;
sigma 1, jitter 0.3, seed 0 as `tessera bench cg --matrix`), float64, random b. Prints one
JSON line per solver (median of --repeats runs).

  /usr/bin/python3 bench/sla_peers.py --n 1000 --solvers scipy-cg,torch-cg,scipy-spsolve
  PYTHONPATH=build/python /usr/bin/python3 bench/sla_peers.py --matrix diffusion2d --solvers scipy-cg-jacobi
"""
import argparse
import json
import statistics
import time
import warnings

import numpy as np
import scipy
import scipy.sparse as sp
import scipy.sparse.linalg as spla
import torch

warnings.filterwarnings("ignore", message="Sparse CSR tensor support")


def poisson2d(n):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    i = sp.identity(n)
    return (sp.kron(i, t) + sp.kron(t, i)).tocsr()   # diagonal 4, -1 per neighbour


def generated(name, n):
    """tessera's generated matrix as a SciPy CSR matrix (the same CSR arrays)."""
    import tessera.sla as sla
    make = {"diffusion2d": sla.variable_diffusion2d, "diffusion3d": sla.variable_diffusion3d,
            "fe-laplacian2d": sla.fe_laplacian2d}[name]
    t = make(n)
    return sp.csr_matrix((t.values.numpy(), t.col_idx.to(torch.int64).numpy(), t.row_ptr.to(torch.int64).numpy()),
                         shape=t.shape)


def scipy_cg_jacobi(a, b, rtol, maxiter):
    """SciPy CG with M = D^{-1} (Jacobi), like tessera's and Eigen's diagonal preconditioner."""
    inv_diag = sp.diags(1.0 / a.diagonal()).tocsr()
    return scipy_cg(a, b, rtol, maxiter, m=inv_diag)


def scipy_cg(a, b, rtol, maxiter, m=None):
    count = [0]

    def step(_):
        count[0] += 1

    t0 = time.perf_counter()
    x, info = spla.cg(a, b, tol=rtol, atol=0.0, maxiter=maxiter, M=m, callback=step)
    seconds = time.perf_counter() - t0
    return x, count[0], seconds, info == 0


def torch_cg(a, b, rtol, maxiter):
    """Unpreconditioned CG; A @ p through torch's CSR x dense-matrix product (CSR @ vector
    needs MKL, which Debian's torch lacks)."""
    at = torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                                 torch.from_numpy(a.indices.astype(np.int64)),
                                 torch.from_numpy(a.data), size=a.shape)
    bt = torch.from_numpy(b)
    t0 = time.perf_counter()
    x = torch.zeros_like(bt)
    r = bt.clone()
    p = r.clone()
    rr = float(r.dot(r))
    tol = rtol * float(bt.norm())
    it = 0
    while rr ** 0.5 > tol and it < maxiter:
        q = (at @ p.unsqueeze(1)).squeeze(1)      # q = A p
        alpha = rr / float(p.dot(q))
        x.add_(p, alpha=alpha)                    # x += alpha p
        r.sub_(q, alpha=alpha)                    # r -= alpha q
        rr_new = float(r.dot(r))
        p.mul_(rr_new / rr).add_(r)               # p = r + beta p
        rr = rr_new
        it += 1
    seconds = time.perf_counter() - t0
    return x.numpy(), it, seconds, rr ** 0.5 <= tol


def scipy_spsolve(a, b, _rtol, _maxiter):
    t0 = time.perf_counter()
    x = spla.spsolve(a.tocsc(), b)                # default: SuperLU, permc_spec COLAMD
    return x, 0, time.perf_counter() - t0, True


SOLVERS = {"scipy-cg": scipy_cg, "scipy-cg-jacobi": scipy_cg_jacobi, "torch-cg": torch_cg,
           "scipy-spsolve": scipy_spsolve}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000, help="grid size (n^2 unknowns, n^3 for diffusion3d)")
    ap.add_argument("--matrix", default="poisson2d", choices=["poisson2d", "diffusion2d", "diffusion3d", "fe-laplacian2d"])
    ap.add_argument("--rtol", type=float, default=1e-8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    ap.add_argument("--solvers", default="scipy-cg,torch-cg")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--iterations", type=int, default=0, help="> 0: exactly this many CG iterations (rtol 0)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    a = poisson2d(args.n) if args.matrix == "poisson2d" else generated(args.matrix, args.n)
    b = np.random.default_rng(args.seed).standard_normal(a.shape[0])
    for name in args.solvers.split(","):
        runs, setup = [], []
        # a fixed count K > 1: per iteration (t(K) - t(1)) / (K - 1), as `tessera bench cg`
        # and build/bench_eigen_cg take theirs (the set-up and first residual left out alike)
        fixed = args.iterations > 1 and name != "scipy-spsolve"
        for _ in range(args.repeats):
            rtol, maxiter = (0.0, args.iterations) if args.iterations > 0 else (args.rtol, 100000)
            x, its, seconds, ok = SOLVERS[name](a, b, rtol, maxiter)
            runs.append((seconds, its, ok, float(np.linalg.norm(b - a @ x) / np.linalg.norm(b))))
            if fixed:
                setup.append(SOLVERS[name](a, b, 0.0, 1)[2])
        med = statistics.median(r[0] for r in runs)
        med1 = statistics.median(setup) if setup else 0.0
        its = runs[0][1]
        subtracted = fixed and its > 1 and med > med1
        per_it = (med - med1) / (its - 1) if subtracted else (med / its if its else None)
        line = {"bench": "peer", "solver": name, "matrix": args.matrix, "dof": a.shape[0], "nnz": a.nnz, "rtol": 0.0 if args.iterations > 0 else args.rtol,
                "iterations": its, "seconds_median": med,
                "seconds_per_iteration_median": per_it, "setup_seconds_median": med1, "setup_subtracted": subtracted,
                "residual": runs[0][3], "converged": all(r[2] for r in runs) or args.iterations > 0, "repeats": args.repeats,
                "threads": args.threads if name == "torch-cg" else 1,
                "versions": {"scipy": scipy.__version__, "torch": torch.__version__}}
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
