#!/usr/bin/python3
"""Peer for bench/sla_spectral.cpp: SciPy's eigsh (ARPACK) on the same 2D Poisson
matrices, 6 smallest (shift-invert at 0, SuperLU) and 6 largest, best of 3.

    /usr/bin/python3 bench/sla_spectral_peer.py [m ...]    (default 50 100)
"""
import json
import sys
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def poisson2d(m):
    # 5-point Laplacian, Dirichlet: kron(I, T) + kron(T, I) with T = tridiag(-1, 2, -1)
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    i = sp.identity(m)
    return (sp.kron(i, t) + sp.kron(t, i)).tocsc()


def main():
    grids = [int(a) for a in sys.argv[1:]] or [50, 100]
    for m in grids:
        a = poisson2d(m)
        for which in ("smallest (shift-invert 0)", "largest"):
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                if which == "largest":
                    w, v = spla.eigsh(a, k=6, which="LA", tol=1e-10)
                else:
                    w, v = spla.eigsh(a, k=6, sigma=0.0, which="LM", tol=1e-10)
                best = min(best, time.perf_counter() - t0)
            res = np.linalg.norm(a @ v - v * w, axis=0).max()
            print(json.dumps({"bench": "eigsh", "backend": "scipy-arpack", "which": which, "n": a.shape[0],
                              "k": 6, "seconds": round(best, 4), "max_residual": float(res),
                              "lambda_min": float(w.min())}))


if __name__ == "__main__":
    main()
