"""Cost of `SpmvFormat::Auto`'s bitwise-symmetry scan (spmv.cpp, sell_sym.cpp), one JSON line a
solve: the first native solve (set-up and 3 iterations) on an n^2-row 5-point matrix with random
symmetric couplings (symmetric SELL: CG), on the same matrix with a_{N-1,N-2} changed (the scan
runs to the last rows before it fails, then SELL-C-sigma is built: BiCGSTAB) and with a_{0,1}
changed (the scan stops at once, then SELL-C-sigma: BiCGSTAB). "last" minus "first" is what a
scan that fails late costs.

    PYTHONPATH=build/python /usr/bin/python3 bench/sym_scan_cost.py [n]   (n = 4000: 16M rows)
"""
import time, torch, tessera, sys
from tessera import sla
torch.set_num_threads(2)
n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
N = n * n
g = torch.Generator().manual_seed(0)
idx = torch.arange(N)
i, j = idx // n, idx % n
rows, cols, vals = [idx], [idx], [torch.full((N,), 8.0, dtype=torch.float64)]
# symmetric random couplings on the 5-point pattern
for di, dj in ((0, 1), (1, 0)):
    m = (i + di < n) & (j + dj < n)
    a = idx[m]; b = (i[m] + di) * n + (j[m] + dj)
    w = -torch.rand(a.numel(), generator=g, dtype=torch.float64) - 0.5
    rows += [a, b]; cols += [b, a]; vals += [w, w]
r = torch.cat(rows); c = torch.cat(cols); v = torch.cat(vals)
order = torch.argsort(r * N + c)
r, c, v = r[order], c[order], v[order]
row_ptr = torch.zeros(N + 1, dtype=torch.int64); row_ptr[1:] = torch.cumsum(torch.bincount(r, minlength=N), 0)
def variant(k):
    vv = v.clone()
    if k == "last": vv[-2] += 1e-3      # a_{N-1, N-2} != a_{N-2, N-1}
    if k == "first": vv[1] += 1e-3      # a_{0, 1} != a_{1, 0}
    return sla.SparseTensor.from_csr(vv, row_ptr.clone(), c.clone(), (N, N))
b = torch.ones(N, dtype=torch.float64)
for rnd in range(3):
    for k in ("symmetric", "last", "first"):
        A = variant(k)
        t0 = time.perf_counter()
        x, info = sla.solve(A, b, backend="native", method="bicgstab" if k != "symmetric" else "cg", maxiter=3, rtol=1e-30, return_info=True)
        t1 = time.perf_counter()
        print(f'{{"round":{rnd},"matrix":"{k}","rows":{N},"seconds":{t1-t0:.4f},"format":"{info.spmv_format}","iterations":{info.iterations}}}', flush=True)
