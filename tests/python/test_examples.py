"""The Python examples, run at small size: each prints a JSON line and exits 0 when its own
check holds (gradient against finite differences; κ error reduced)."""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "python" / "examples"


def run_example(name, *args):
    out = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, GLOG_minloglevel="2"))
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_poisson_gradient_example():
    r = run_example("poisson_gradient.py", "--n", "24", "--threads", "1")
    assert r["status"] == "converged" and r["dof"] == 576
    assert r["gradient_fd_relative_error"] < 1e-5
    r = run_example("poisson_gradient.py", "--n", "16", "--backend", "native", "--method", "cg", "--threads", "1")
    assert r["method"] == "cg" and r["gradient_fd_relative_error"] < 1e-5


def test_inverse_conductivity_example():
    # 8 x 8 cells, 150 Adam steps: the misfit falls by orders of magnitude and κ moves
    # towards the truth (its relative error starts at 0.243)
    r = run_example("inverse_conductivity.py", "--n", "8", "--steps", "150", "--time-limit", "60", "--target", "0.15",
                    "--threads", "1")
    assert r["misfit"] < 1e-4 and r["kappa_error"] < 0.15


def test_lirpa_modules_and_verify_example():
    out = subprocess.run([sys.executable, str(EXAMPLES / "lirpa_modules_and_verify.py"), "--timeout", "60"],
                         capture_output=True, text=True, timeout=180, env=dict(os.environ, GLOG_minloglevel="2"))
    assert out.returncode == 0, out.stdout + out.stderr
    lines = [json.loads(l) for l in out.stdout.strip().splitlines()]
    assert [l["example"] for l in lines] == ["module_bounds", "module_bounds", "verify"]
    for l in lines[:2]:
        assert all(l[m]["sound"] for m in ("ibp", "crown", "alpha-crown"))
        assert l["alpha-crown"]["width_sum"] <= l["crown"]["width_sum"] + 1e-9
    assert lines[2]["verdict"] == "sat" and lines[2]["counterexample_checked"]


def test_mesh_mlp_training_example():
    # 12 x 12 mesh, 400 Adam steps on the network's 1185 weights: the misfit falls below
    # 5% of the first (0.29 -> about 0.005 when written)
    r = run_example("mesh_mlp_training.py", "--n", "12", "--steps", "400", "--target-ratio", "0.05",
                    "--threads", "1")
    assert r["best_misfit"] < 0.05 * r["first_misfit"]
