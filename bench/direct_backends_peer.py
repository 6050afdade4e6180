#!/usr/bin/python3
"""Peer for bench/direct_backends.cpp: SciPy's splu (its bundled SuperLU, COLAMD) on the
same 2D Poisson matrices, b = A 1. Prints JSON lines with the same keys.

    /usr/bin/python3 bench/direct_backends_peer.py [m ...]    (default 100 200 400)
"""
import json
import sys
import time

import numpy as np
import scipy
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def poisson2d(m):
    # 5-point Laplacian, Dirichlet: kron(I, T) + kron(T, I) with T = tridiag(-1, 2, -1)
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    i = sp.identity(m)
    return (sp.kron(i, t) + sp.kron(t, i)).tocsc()


def main():
    grids = [int(a) for a in sys.argv[1:]] or [100, 200, 400]
    for m in grids:
        a = poisson2d(m)
        b = a @ np.ones(a.shape[0])
        repeats = 3 if a.shape[0] <= 40000 else 1
        factor_best = solve_best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            lu = spla.splu(a, permc_spec="COLAMD")
            factor_best = min(factor_best, time.perf_counter() - start)
            start = time.perf_counter()
            x = lu.solve(b)
            solve_best = min(solve_best, time.perf_counter() - start)
        residual = np.linalg.norm(a @ x - b) / np.linalg.norm(b)
        print(json.dumps({"bench": "direct_backends_peer", "matrix": "poisson2d", "grid": m,
                          "n": a.shape[0], "nnz": a.nnz, "backend": "scipy.splu " + scipy.__version__,
                          "method": "lu", "factor_seconds": round(factor_best, 6),
                          "solve_seconds": round(solve_best, 6), "residual": float(f"{residual:.3e}"),
                          "repeats": repeats}), flush=True)


if __name__ == "__main__":
    main()
