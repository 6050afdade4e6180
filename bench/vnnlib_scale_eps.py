#!/usr/bin/python3
"""Writes harder (or easier) copies of an L-infinity robustness property in VNN-LIB.

    bench/vnnlib_scale_eps.py PROP.vnnlib EPS FACTOR... --out DIR

PROP's input box is [x - EPS, x + EPS] clipped to [0, 1] (VNN-COMP's mnist_fc and CIFAR
properties). Each pixel's x is recovered from the side that was not clipped (x = upper - EPS
where the lower bound is 0, else lower + EPS), and for each FACTOR a copy with the box
[x - FACTOR EPS, x + FACTOR EPS], clipped to [0, 1], is written as DIR/<name>_x<FACTOR>.vnnlib;
the output constraints are kept as they are. Used to compare branch-and-bound settings on
instances between the benchmark's (decided in a second) and the attack's (sat at once).
"""
import argparse
import os
import re

LOWER = re.compile(r"\(assert \(>= X_(\d+) ([-+0-9.eE]+)\)\)")
UPPER = re.compile(r"\(assert \(<= X_(\d+) ([-+0-9.eE]+)\)\)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("prop")
    ap.add_argument("eps", type=float)
    ap.add_argument("factors", type=float, nargs="+")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    text = open(a.prop).read()
    lo = {int(m.group(1)): float(m.group(2)) for m in LOWER.finditer(text)}
    hi = {int(m.group(1)): float(m.group(2)) for m in UPPER.finditer(text)}
    if not lo or lo.keys() != hi.keys():
        raise SystemExit(f"{a.prop}: expected one lower and one upper bound for every input X_i")
    centre = {i: hi[i] - a.eps if lo[i] <= 0 else lo[i] + a.eps for i in lo}
    os.makedirs(a.out, exist_ok=True)
    name = os.path.splitext(os.path.basename(a.prop))[0]
    for f in a.factors:
        e = a.eps * f
        t = LOWER.sub(lambda m: "(assert (>= X_%s %.9f))" % (m.group(1), max(0.0, centre[int(m.group(1))] - e)), text)
        t = UPPER.sub(lambda m: "(assert (<= X_%s %.9f))" % (m.group(1), min(1.0, centre[int(m.group(1))] + e)), t)
        path = os.path.join(a.out, "%s_x%.2f.vnnlib" % (name, f))
        with open(path, "w") as out:
            out.write(t)
        print(path)


if __name__ == "__main__":
    main()
