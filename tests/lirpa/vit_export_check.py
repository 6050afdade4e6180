#!/usr/bin/python3
"""A small Vision Transformer exported by torch.onnx.export (LayerNorm, GELU, true softmax
attention with 2 heads, a class token, 2 blocks; bench/vit_instance.py) loads in `tessera
bounds`, and its IBP, CROWN and alpha-CROWN bounds contain the outputs of 10^4 sampled points
of the box (corners included); alpha-CROWN is at least as tight as CROWN on every output.
At a box of width 0 the interval bounds are the network's output (the import computes what
PyTorch computes). The model is written to a temporary folder, never kept.

Usage: vit_export_check.py TESSERA   (exit 77, skipped, when torch is not installed)
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import torch
except ImportError:
    print("torch is not installed: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import vit_instance  # noqa: E402

SAMPLES = 10_000
TOL = 1e-9
# the export keeps float32 constants (GELU's sqrt(2), LayerNorm's eps) where the float64
# PyTorch model has exact ones: outputs differ by ~1e-9, well under this
MODEL_TOL = 1e-6


def bounds(tessera, onnx_path, vnnlib_path, method):
    out = subprocess.run([tessera, "bounds", onnx_path, vnnlib_path, "--method", method, "--json"], check=True,
                         capture_output=True, text=True, timeout=600).stdout
    j = json.loads(out.strip().splitlines()[-1])
    assert None not in j["lower"] + j["upper"], f"{method}: a bound is not finite: {j}"
    return torch.tensor(j["lower"], dtype=torch.float64), torch.tensor(j["upper"], dtype=torch.float64)


def main():
    tessera = sys.argv[1]
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
        net, onnx_path, vnnlib_path, lower, upper = vit_instance.write_instance(tmp, eps=0.002, seed=0)

        # a point box: the interval bounds are f(x) itself
        point = os.path.join(tmp, "point.vnnlib")
        centre = (lower + upper) / 2
        vit_instance.box_vnnlib(point, centre.flatten(), centre.flatten(), 3)
        lo, up = bounds(tessera, onnx_path, point, "ibp")
        y = net(centre.unsqueeze(0))[0]
        print(f"point box: tessera {lo.tolist()}, torch {y.tolist()}")
        assert torch.allclose(lo, y, rtol=0, atol=MODEL_TOL) and torch.allclose(up, y, rtol=0, atol=MODEL_TOL)

        g = torch.Generator().manual_seed(1)
        x = lower + (upper - lower) * torch.rand((SAMPLES,) + tuple(lower.shape), generator=g, dtype=torch.float64)
        corners = torch.rand((SAMPLES // 10,) + tuple(lower.shape), generator=g) < 0.5
        x[: SAMPLES // 10] = torch.where(corners, upper, lower)
        y = torch.cat([net(chunk) for chunk in x.split(1000)])
        ymin, ymax = y.min(0).values, y.max(0).values
        print(f"sampled outputs: min {ymin.tolist()}, max {ymax.tolist()}")
        found = {}
        for method in ("ibp", "crown", "alpha-crown"):
            lo, up = bounds(tessera, onnx_path, vnnlib_path, method)
            print(f"{method}: lower {lo.tolist()}, upper {up.tolist()}")
            assert (lo <= ymin + MODEL_TOL).all(), f"{method}: lower bound above a sampled output"
            assert (up >= ymax - MODEL_TOL).all(), f"{method}: upper bound below a sampled output"
            found[method] = (lo, up)
        (cl, cu), (al, au) = found["crown"], found["alpha-crown"]
        assert (al >= cl - TOL).all() and (au <= cu + TOL).all(), "alpha-CROWN looser than CROWN"
        assert (cu - cl).sum() < (found["ibp"][1] - found["ibp"][0]).sum(), "CROWN looser than IBP"
    print("PASS")


if __name__ == "__main__":
    main()
