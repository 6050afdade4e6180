#!/usr/bin/python3
"""`tessera bounds --shard tp-heads` on a ViT exported by torch.onnx.export (bench/vit_instance.py:
4 heads from one fused QKV Linear, LayerNorm, GELU MLPs, class token, 2 blocks) at 2 ranks: IBP and
CROWN bounds within 1e-9 (relative to 1 + the largest bound) of one process, each rank's peak below
one process's, and `verify --shard tp-heads` refused with a message. The model is written to a
temporary folder, never kept.

Usage: vit_tp_heads_check.py TESSERA MPIRUN...   (exit 77, skipped, when torch is not installed)
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import torch  # noqa: F401 (vit_instance exports with it)
except ImportError:
    print("torch is not installed: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import vit_instance  # noqa: E402

TOL = 1e-9


def bounds(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    tessera, mpirun = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory() as tmp:
        _, onnx_path, vnnlib_path, _, _ = vit_instance.write_instance(tmp, dim=16, heads=4, mlp=32, seed=2)
        for method in ("ibp", "crown"):
            args = ["bounds", onnx_path, vnnlib_path, "--method", method, "--json"]
            one = bounds([tessera, "--threads", "1"] + args)
            two = bounds(mpirun + ["-np", "2", tessera, "--threads", "1"] + args + ["--shard", "tp-heads"])
            ref = one["lower"] + one["upper"]
            diff = max(abs(a - b) for a, b in zip(ref, two["lower"] + two["upper"])) / (1 + max(map(abs, ref)))
            print(f"{method}: one process peak {one['peak_bytes']}, tp-heads per rank {two['peak_bytes']}, "
                  f"largest difference {diff:.3g}")
            assert diff <= TOL, f"{method}: tp-heads differs from one process by {diff}"
            assert max(two["peak_bytes"]) < one["peak_bytes"][0], f"{method}: a rank's peak is not below one process's"
            assert max(two["baseline_bytes"]) < one["baseline_bytes"][0]
        refused = subprocess.run(mpirun + ["-np", "2", tessera, "verify", onnx_path, vnnlib_path, "--shard", "tp-heads"],
                                 capture_output=True, text=True, timeout=600)
        assert refused.returncode != 0 and "tp-heads" in refused.stderr, (refused.returncode, refused.stderr)
    print("PASS")


if __name__ == "__main__":
    main()
