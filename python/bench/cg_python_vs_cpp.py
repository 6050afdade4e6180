"""Benchmark: the same native CG solve called from Python and from C++.

2D Poisson (poisson2d(n), n^2 unknowns; 1M DOF at n = 1000), float64, b = randn with seed 0,
native CG with Jacobi, rtol 1e-8: the C++ side is `tessera bench cg` (the same
SparseTensor, right-hand side and SolveOptions through tessera::sla::solve), the Python side
is `A.solve(b, backend="native", method="cg", preconditioner="jacobi")` through the
extension. Rounds alternate C++ and Python; each side reports the median time to solution
over all its solves. Prints JSON lines: one per side and round, then a summary with the
ratio python / cpp.

    PYTHONPATH=build/python /usr/bin/python3 python/bench/cg_python_vs_cpp.py --build build --n 1000
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import time

import torch

from tessera import sla


def cpp_round(exe, n, rtol, repeats, threads):
    cmd = [str(exe), "--threads", str(threads), "bench", "cg", "--n", str(n), "--rtol", repr(float(rtol)),
           "--repeats", str(repeats), "--formats", "stencil", "--preconditioners", "jacobi"]
    env = dict(os.environ, GLOG_minloglevel="2")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    line = [l for l in out.splitlines() if l.startswith("{")][-1]
    return json.loads(line), " ".join(cmd)


def python_round(A, b, rtol, repeats):
    times, info = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        x, info = A.solve(b, backend="native", method="cg", preconditioner="jacobi", rtol=rtol, maxiter=100000,
                          return_info=True)
        times.append(time.perf_counter() - t0)
    return times, info


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default="build", help="build directory holding the tessera tool")
    p.add_argument("--n", type=int, default=1000, help="grid side (n^2 unknowns)")
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--repeats", type=int, default=3, help="solves per round and side")
    p.add_argument("--rounds", type=int, default=2, help="alternating C++ / Python rounds")
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    a = p.parse_args()

    exe = pathlib.Path(a.build) / "tessera"
    torch.set_num_threads(a.threads)
    A = sla.poisson2d(a.n)
    torch.manual_seed(0)
    b = torch.randn(A.shape[0], dtype=torch.float64)
    cpp_times, py_times = [], []
    for r in range(a.rounds):
        j, cmd = cpp_round(exe, a.n, a.rtol, a.repeats, a.threads)
        cpp_times.append(j["seconds_median"])
        print(json.dumps({"bench": "cg_python_vs_cpp", "side": "cpp", "round": r, "seconds_median": j["seconds_median"],
                          "iterations": j["iterations"], "status": j["status"], "residual": j["residual"],
                          "threads": j["threads"], "command": cmd}), flush=True)
        times, info = python_round(A, b, a.rtol, a.repeats)
        py_times += times
        print(json.dumps({"bench": "cg_python_vs_cpp", "side": "python", "round": r,
                          "seconds_median": statistics.median(times), "seconds": times,
                          "iterations": info.iterations, "status": info.status, "residual": info.residual,
                          "threads": torch.get_num_threads()}), flush=True)
    # the C++ side reports one median per round (of its repeats); the Python side every solve
    cpp = statistics.median(cpp_times)
    py = statistics.median(py_times)
    print(json.dumps({"bench": "cg_python_vs_cpp", "summary": True, "dof": A.shape[0], "rtol": a.rtol,
                      "cpp_seconds_median": cpp, "python_seconds_median": py, "ratio_python_to_cpp": py / cpp,
                      "threads": a.threads, "rounds": a.rounds, "repeats": a.repeats,
                      "loadavg": open("/proc/loadavg").read().split()[:3]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
