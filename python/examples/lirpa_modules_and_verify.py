"""Bounds of torch modules and verification of a VNN-LIB property, from Python.

1. A torch.nn.Sequential MLP and a small CNN, given as modules (exported to ONNX in
   memory): IBP, CROWN and alpha-CROWN bounds over an L-infinity box, checked to contain
   the outputs at sampled inputs.
2. tessera.lirpa.verify on an ONNX network and a VNN-LIB property (default: ACAS Xu
   network 1_4 with property 2 from ../shared/data/vnncomp2021), with the counterexample
   checked by a forward pass when the verdict is sat.
Prints JSON lines.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/lirpa_modules_and_verify.py
"""

import argparse
import json
import pathlib
import time

import torch

from tessera import lirpa

DATA = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "data" / "vnncomp2021" / "acasxu"


def bounds_of(name, net, shape, eps):
    model = lirpa.BoundedModel.from_module(net, torch.zeros(shape))
    g = torch.Generator().manual_seed(0)
    center = torch.rand(shape[1:], generator=g, dtype=torch.float64)
    lower, upper = center - eps, center + eps
    x = lower + (upper - lower) * torch.rand((1000,) + tuple(shape[1:]), generator=g, dtype=torch.float64)
    with torch.no_grad():
        y = net.double()(x)
    net.float()
    out = {"example": "module_bounds", "model": name}
    ok = True
    for method in ("ibp", "crown", "alpha-crown"):
        t0 = time.perf_counter()
        lo, up = model.compute_bounds(lower, upper, method=method)
        sound = bool((lo <= y.min(0).values + 1e-9).all() and (up >= y.max(0).values - 1e-9).all())
        ok &= sound
        out[method] = {"width_sum": float((up - lo).sum()), "seconds": time.perf_counter() - t0, "sound": sound}
    print(json.dumps(out))
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--onnx", default=str(DATA / "ACASXU_run2a_1_4_batch_2000.onnx"))
    p.add_argument("--vnnlib", default=str(DATA / "prop_2.vnnlib"))
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--eps", type=float, default=0.05)
    a = p.parse_args()

    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32), torch.nn.ReLU(),
                              torch.nn.Linear(32, 4))
    cnn = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, stride=2, padding=1), torch.nn.ReLU(),
                              torch.nn.Conv2d(4, 8, 3, stride=2, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                              torch.nn.Linear(8 * 4 * 4, 10))
    ok = bounds_of("mlp", mlp, (1, 8), a.eps)
    ok &= bounds_of("cnn", cnn, (1, 1, 16, 16), a.eps)

    t0 = time.perf_counter()
    r = lirpa.verify(a.onnx, a.vnnlib, timeout=a.timeout)
    seconds = time.perf_counter() - t0
    checked = None
    if r.verdict == "sat":
        x, y = r.counterexample
        y_again = lirpa.BoundedModel.from_onnx(a.onnx)(x.reshape(1, -1)).flatten()
        checked = bool(torch.allclose(y_again, y))
        ok &= checked
    print(json.dumps({"example": "verify", "onnx": pathlib.Path(a.onnx).name, "vnnlib": pathlib.Path(a.vnnlib).name,
                      "verdict": r.verdict, "decided_by": r.decided_by, "seconds": seconds,
                      "domains_visited": r.domains_visited, "counterexample_checked": checked}))
    return 0 if ok and r.verdict in ("sat", "unsat") else 1


if __name__ == "__main__":
    raise SystemExit(main())
