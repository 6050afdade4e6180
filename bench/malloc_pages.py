#!/usr/bin/python3
"""glibc's malloc with and without transparent huge pages (glibc.malloc.hugetlb), same binary.

    bench/malloc_pages.py [--bin DIR] [--rounds N] [--only NAME]... [--scale N]

Runs each job through DIR's `tessera` launcher twice per round, alternated: "4k" with
GLIBC_TUNABLES=glibc.malloc.hugetlb=0 (glibc's default pages) and "huge" with the launcher's
own choice (glibc.malloc.hugetlb=1, include/tessera/core/malloc_pages.h). Per run: wall and
CPU seconds (user, system), minor page faults and peak RSS of the process (wait4), and the
`seconds` a job reports in its JSON where it has one. One JSON line per run, then one summary
line per (job, setting) with medians. Jobs: CROWN and alpha-CROWN on the VNN-COMP 2022
sri_resnet_a and CROWN on oval21 (one thread), an ACAS Xu instance decided at once and
`--version` (start-up), a 1M-DOF `solve` and AMG set-up at 4.2M DOF (two threads), and with
--scale N a matrix-free `bench scale` at n = N (memory: peak RSS).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
RESNET = os.path.join(DATA, "vnncomp2022", "sri_resnet_a")
RESNET_NET = os.path.join(RESNET, "resnet_3b2_bn_mixup_adv_4.0_bs128_lr-1.onnx")
RESNET_PROP = os.path.join(RESNET, "cifar10_spec_idx_4711_eps_0.00350.vnnlib")
OVAL = os.path.join(DATA, "vnncomp2021", "oval21")
ACAS = os.path.join(DATA, "vnncomp2021", "acasxu")


def jobs(scale):
    j = {
        "crown_sri_resnet_a": ["--threads", "1", "bounds", RESNET_NET, RESNET_PROP, "--method", "crown", "--json"],
        "alpha_crown5_sri_resnet_a": ["--threads", "1", "bounds", RESNET_NET, RESNET_PROP, "--method", "alpha-crown",
                                      "--iterations", "5", "--json"],
        "crown_oval21": ["--threads", "1", "bounds", os.path.join(OVAL, "cifar_wide_kw.onnx"),
                         os.path.join(OVAL, "cifar_wide_kw-img19-eps0.007973856209150327.vnnlib"), "--method", "crown",
                         "--json"],
        "verify_acasxu_4_5_prop_3": ["verify", os.path.join(ACAS, "ACASXU_run2a_4_5_batch_2000.onnx"),
                                     os.path.join(ACAS, "prop_3.vnnlib"), "--timeout", "60"],
        "version": ["--version"],
        "solve_poisson2d_1000": ["solve", "--poisson2d", "1000"],
        "amg_setup_poisson2d_2048": ["bench", "amg", "--n", "2048", "--case", "poisson2d"],
    }
    if scale:
        j[f"scale_matrix_free_{scale}"] = ["--threads", "2", "bench", "scale", "--n", str(scale), "--matrix-free"]
    return j


def run(cmd, env):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    out = p.stdout.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    reported = [float(x) for x in re.findall(r'"(?:seconds|setup_seconds)":([0-9.eE+-]+)', out)]
    return {"wall": round(wall, 4), "user": round(ru.ru_utime, 3), "sys": round(ru.ru_stime, 3),
            "minor_faults": ru.ru_minflt, "max_rss_mb": round(ru.ru_maxrss / 1024, 1),
            "reported_seconds": reported[0] if reported else None, "status": os.waitstatus_to_exitcode(status)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--scale", type=int, default=0)
    args = ap.parse_args()
    tessera = os.path.join(args.bin, "tessera")
    base = dict(os.environ, GLOG_minloglevel="2")
    base.pop("GLIBC_TUNABLES", None)
    base.pop("TESSERA_MALLOC_DEFAULT", None)
    settings = {"4k": dict(base, GLIBC_TUNABLES="glibc.malloc.hugetlb=0"), "huge": dict(base)}
    runs = {}
    load = [os.getloadavg()[0]]
    for name, job in jobs(args.scale).items():
        if args.only and name not in args.only:
            continue
        for r in range(args.rounds):
            order = ["4k", "huge"] if r % 2 == 0 else ["huge", "4k"]
            for s in order:
                res = run([tessera] + job, settings[s])
                res.update(job=name, setting=s, round=r)
                print(json.dumps(res), flush=True)
                runs.setdefault((name, s), []).append(res)
    load.append(os.getloadavg()[0])
    for (name, s), rs in runs.items():
        med = {k: statistics.median([x[k] for x in rs]) for k in ("wall", "user", "sys", "minor_faults", "max_rss_mb")}
        rep = [x["reported_seconds"] for x in rs if x["reported_seconds"] is not None]
        med["reported_seconds"] = statistics.median(rep) if rep else None
        print(json.dumps({"summary": name, "setting": s, "runs": len(rs), "statuses": sorted({x["status"] for x in rs}),
                          "median": med, "load_1min": load,
                          "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
