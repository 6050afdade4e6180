#!/usr/bin/python3
"""Writes a random ReLU MLP (ONNX) and a VNN-LIB property on it, for sharded-verification runs.

Usage: wide_mlp_instance.py OUT_DIR [--inputs 784] [--hidden 1024,1024] [--outputs 10]
           [--eps 0.002] [--threshold T] [--seed 1]
The network has He-initialised weights (seed), the input box is a random point of [0, 1]^n
+- eps, and the property's unsafe region is y0 - y1 <= T. Without --threshold it prints the
sampled minimum of y0 - y1 over the box (choose T below it for an unsat instance).
"""
import argparse
import os

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--inputs", type=int, default=784)
    ap.add_argument("--hidden", default="1024,1024")
    ap.add_argument("--outputs", type=int, default=10)
    ap.add_argument("--eps", type=float, default=0.002)
    ap.add_argument("--threshold", type=float)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    widths = [a.inputs] + [int(h) for h in a.hidden.split(",")] + [a.outputs]
    layers = []
    for i in range(len(widths) - 1):
        lin = torch.nn.Linear(widths[i], widths[i + 1])
        torch.nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")  # He
        torch.nn.init.uniform_(lin.bias, -0.1, 0.1)
        layers += [lin, torch.nn.ReLU()]
    net = torch.nn.Sequential(*layers[:-1]).double()
    x0 = torch.rand(a.inputs, dtype=torch.float64)
    lo, hi = (x0 - a.eps).clamp(0, 1), (x0 + a.eps).clamp(0, 1)
    name = "mlp_" + "x".join(str(w) for w in widths)
    os.makedirs(a.out, exist_ok=True)
    torch.onnx.export(net.float(), torch.zeros(1, a.inputs), os.path.join(a.out, name + ".onnx"))
    with torch.no_grad():
        xs = lo + (hi - lo) * torch.rand(20000, a.inputs, dtype=torch.float64)
        g = net.double()(xs)
        gmin = (g[:, 0] - g[:, 1]).min().item()
    print(f"{name}: sampled min of y0 - y1 = {gmin:.9g}")
    if a.threshold is None:
        return
    with open(os.path.join(a.out, name + ".vnnlib"), "w") as f:
        for i in range(a.inputs):
            f.write(f"(declare-const X_{i} Real)\n")
        for i in range(a.outputs):
            f.write(f"(declare-const Y_{i} Real)\n")
        for i in range(a.inputs):
            f.write(f"(assert (<= X_{i} {hi[i].item():.17g}))\n(assert (>= X_{i} {lo[i].item():.17g}))\n")
        f.write(f"(assert (<= (- Y_0 Y_1) {a.threshold:.17g}))\n")


if __name__ == "__main__":
    main()
