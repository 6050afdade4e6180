#!/usr/bin/python3
"""Peer for bench/sla_spectral.cpp: SciPy's eigsh (ARPACK) on the same 2D Poisson
matrices, k = 6, in the modes of bench_sla_spectral --modes: "largest" (which='LA'),
"smallest" (which='SA', Lanczos on A) and "shift0" (sigma=0, shift-invert with SuperLU).
Best of R runs. --tol: ARPACK's relative tolerance (1e-10 = tessera's default; 0 = SciPy's
default, machine precision).

    /usr/bin/python3 bench/sla_spectral_peer.py [--modes largest,smallest,shift0]
                                                [--tol 1e-10] [--repeats 3] [--ncv 0] [m ...]   (default 50 100)
--ncv: ARPACK's Krylov space size (0: SciPy's default, max(2k + 1, 20)).
"""
import argparse
import json
import time

import numpy as np
import scipy
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def poisson2d(m):
    # 5-point Laplacian, Dirichlet: kron(I, T) + kron(T, I) with T = tridiag(-1, 2, -1)
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    i = sp.identity(m)
    return (sp.kron(i, t) + sp.kron(t, i)).tocsr()


def run(a, mode, tol, ncv):
    if mode == "largest":
        return spla.eigsh(a, k=6, which="LA", tol=tol, ncv=ncv)
    if mode == "smallest":
        return spla.eigsh(a, k=6, which="SA", tol=tol, ncv=ncv)
    if mode == "shift0":
        return spla.eigsh(a.tocsc(), k=6, sigma=0.0, which="LM", tol=tol, ncv=ncv)
    raise SystemExit(f"unknown mode {mode} (largest, smallest, shift0)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", default="largest,smallest,shift0")
    ap.add_argument("--tol", type=float, default=1e-10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ncv", type=int, default=0)
    ap.add_argument("grids", nargs="*", type=int)
    args = ap.parse_args()
    for m in args.grids or [50, 100]:
        a = poisson2d(m)
        for mode in args.modes.split(","):
            best = float("inf")
            for _ in range(max(1, args.repeats)):
                t0 = time.perf_counter()
                w, v = run(a, mode, args.tol, args.ncv or None)
                best = min(best, time.perf_counter() - t0)
            res = np.linalg.norm(a @ v - v * w, axis=0).max()
            print(json.dumps({"bench": "eigsh", "backend": f"scipy-arpack (scipy {scipy.__version__})",
                              "mode": mode, "tol": args.tol, "n": a.shape[0], "k": 6, "ncv": args.ncv, "seconds": round(best, 4),
                              "max_residual": float(res), "lambda_min": float(w.min()),
                              "lambda_max": float(w.max())}), flush=True)


if __name__ == "__main__":
    main()
