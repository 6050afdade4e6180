#!/usr/bin/python3
"""Independent check of a verdict on a fully connected ReLU network (Gemm/ReLU ONNX, one
VNN-LIB property of the form: input box, unsafe if some Y_j >= Y_label): a mixed-integer
program per output j (big-M ReLU encoding with interval pre-activation bounds), solved by
SciPy's HiGHS. No tessera code: the ONNX protobuf is decoded here.

  /usr/bin/python3 bench/milp_check_mlp.py NET.onnx PROP.vnnlib [--time-limit 600]

Prints max(Y_j - Y_label) and HiGHS's proven upper bound per j, then
`VERDICT unsat (proved)` when every upper bound is < 0, `VERDICT sat` when some maximum is
>= 0 (with the input), otherwise `VERDICT unknown`.
"""
import argparse
import re
import time

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_matrix


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def fields(b):
    """(field number, wire type, value) of a protobuf message."""
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        f, t = k >> 3, k & 7
        if t == 0:
            v, i = varint(b, i)
        elif t == 1:
            v, i = b[i:i + 8], i + 8
        elif t == 5:
            v, i = b[i:i + 4], i + 4
        elif t == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError(f"wire type {t}")
        yield f, t, v


def read_mlp(path):
    """Weights [out, in] and biases of the Gemm layers in node order (transB = 1 assumed, checked by shape)."""
    graph = [v for f, _, v in fields(open(path, "rb").read()) if f == 7][0]
    init, gemms = {}, []
    for f, _, v in fields(graph):
        if f == 5:   # TensorProto: dims 1, float_data 4, name 8, raw_data 9
            dims, name, raw = [], None, None
            for g, tt, w in fields(v):
                if g == 1 and tt == 0:
                    dims.append(w)
                elif g == 1:
                    j = 0
                    while j < len(w):
                        d, j = varint(w, j)
                        dims.append(d)
                elif g == 8:
                    name = w.decode()
                elif g == 9:
                    raw = w
            init[name] = np.frombuffer(raw, dtype=np.float32).reshape(dims).astype(np.float64)
        elif f == 1:   # NodeProto: input 1, op_type 4
            op = [w.decode() for g, _, w in fields(v) if g == 4][0]
            if op == "Gemm":
                gemms.append([w.decode() for g, _, w in fields(v) if g == 1])
    layers = [(init[ins[1]], init[ins[2]]) for ins in gemms]
    for (w, _), (w_next, _) in zip(layers, layers[1:]):
        assert w_next.shape[1] == w.shape[0], "expected Gemm weights [out, in] (transB = 1)"
    return layers


def read_property(path, n_in):
    s = open(path).read()
    lo, hi = np.full(n_in, -np.inf), np.full(n_in, np.inf)
    for m in re.finditer(r"\(assert \(<= X_(\d+) ([-\d.eE+]+)\)\)", s):
        hi[int(m.group(1))] = float(m.group(2))
    for m in re.finditer(r"\(assert \(>= X_(\d+) ([-\d.eE+]+)\)\)", s):
        lo[int(m.group(1))] = float(m.group(2))
    pairs = re.findall(r"\(>= Y_(\d+) Y_(\d+)\)", s)
    label = int(pairs[0][1])
    assert all(int(b) == label for _, b in pairs), "only 'Y_j >= Y_label' disjunctions are handled"
    return lo, hi, label, [int(a) for a, _ in pairs]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("onnx")
    ap.add_argument("vnnlib")
    ap.add_argument("--time-limit", type=float, default=600)
    a = ap.parse_args()
    layers = read_mlp(a.onnx)
    lo, hi, label, others = read_property(a.vnnlib, layers[0][0].shape[1])
    assert np.isfinite(lo).all() and np.isfinite(hi).all(), "every input needs both bounds"
    # variables: x, then per hidden layer z (pre-activation), h (post), d (binary)
    sizes = [w.shape[0] for w, _ in layers[:-1]]
    n = len(lo) + 3 * sum(sizes)
    lb, ub, integ = np.full(n, -np.inf), np.full(n, np.inf), np.zeros(n)
    lb[:len(lo)], ub[:len(lo)] = lo, hi
    rows, rl, ru = [], [], []
    prev, prev_n, hl, hu, at = 0, len(lo), lo, hi, len(lo)
    unstable = []
    for (w, b), m in zip(layers[:-1], sizes):
        wp, wn = np.maximum(w, 0), np.minimum(w, 0)
        l, u = wp @ hl + wn @ hu + b, wp @ hu + wn @ hl + b          # interval bounds of z = W h + b
        iz, ih, idd = at, at + m, at + 2 * m
        lb[iz:iz + m], ub[iz:iz + m] = l, u
        lb[ih:ih + m], ub[ih:ih + m] = 0, np.maximum(u, 0)
        lb[idd:idd + m], ub[idd:idd + m], integ[idd:idd + m] = 0, 1, 1
        for i in range(m):
            c = {iz + i: 1.0}
            c.update({prev + j: -w[i, j] for j in range(prev_n) if w[i, j] != 0})
            rows.append(c); rl.append(b[i]); ru.append(b[i])                       # z = W h_prev + b
            if l[i] >= 0:
                rows.append({ih + i: 1, iz + i: -1}); rl.append(0); ru.append(0)      # h = z
                ub[idd + i] = 0
            elif u[i] <= 0:
                ub[ih + i] = ub[idd + i] = 0                                          # h = 0
            else:
                rows.append({ih + i: 1, iz + i: -1}); rl.append(0); ru.append(np.inf)            # h >= z
                rows.append({ih + i: 1, idd + i: -u[i]}); rl.append(-np.inf); ru.append(0)       # h <= u d
                rows.append({ih + i: 1, iz + i: -1, idd + i: -l[i]}); rl.append(-np.inf); ru.append(-l[i])  # h <= z - l (1 - d)
        unstable.append(int(((l < 0) & (u > 0)).sum()))
        prev, prev_n, hl, hu, at = ih, m, np.maximum(l, 0), np.maximum(u, 0), at + 3 * m
    A = lil_matrix((len(rows), n))
    for r, c in enumerate(rows):
        for j, v in c.items():
            A[r, j] = v
    cons = LinearConstraint(A.tocsr(), rl, ru)
    w_out, b_out = layers[-1]
    print(f"unstable ReLUs per layer (interval bounds): {unstable}", flush=True)
    worst, found = -np.inf, None
    for j in others:
        obj = np.zeros(n)
        obj[prev:prev + prev_n] = -(w_out[j] - w_out[label])                           # maximise Y_j - Y_label
        t0 = time.time()
        res = milp(obj, constraints=cons, integrality=integ, bounds=Bounds(lb, ub),
                   options={"time_limit": a.time_limit, "mip_rel_gap": 1e-6})
        const = b_out[j] - b_out[label]
        best = -res.fun + const if res.x is not None else None
        bound = -res.mip_dual_bound + const if getattr(res, "mip_dual_bound", None) is not None else np.inf
        print(f"j={j}: max(Y_{j} - Y_{label}) = {best}, proven upper bound {bound} ({time.time() - t0:.1f} s, status {res.status})", flush=True)
        worst = max(worst, bound)
        if best is not None and best >= 0 and found is None:
            found = res.x[:len(lo)]
    if found is not None:
        print("VERDICT sat (counterexample found by the MILP)")
    elif worst < 0:
        print("VERDICT unsat (proved: every upper bound < 0)")
    else:
        print(f"VERDICT unknown (largest upper bound {worst})")


if __name__ == "__main__":
    main()
