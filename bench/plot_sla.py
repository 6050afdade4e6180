#!/usr/bin/python3
"""PNG plots from the JSON lines of bench/sla_peers.sh:
  sla_cg_time_per_iteration.png  time per CG iteration vs DOF for every solver (log-log)
  sla_spmv_bandwidth.png         SpMV bandwidth per storage form and size vs STREAM triad
  sla_amg_scaling.png            AMG-CG iterations and time to solution vs DOF (2D Poisson;
                                 lines of `tessera bench amg` and `tessera bench scale`)

  /usr/bin/python3 bench/plot_sla.py bench/results/sla_perf.jsonl [out_dir] [amg.jsonl ...]
"""
import collections
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def label(l):
    if l.get("bench") == "cg":
        return f'tessera CG ({l["format"]}, {l["preconditioner"]})'
    if l.get("solver") == "eigen-cg":
        return f'Eigen CG ({l["preconditioner"]}, {l["threads"]} threads)'
    return {"scipy-cg": "SciPy CG", "torch-cg": "torch CSR CG"}.get(l.get("solver"))


def plot_cg(lines, out):
    series = collections.defaultdict(list)
    for l in lines:
        if (l.get("seconds_per_iteration_median") or 0) > 0 and l.get("rtol") == 0 and label(l) and "setup_seconds_median" not in l:
            series[label(l)].append((l["dof"], l["seconds_per_iteration_median"] * 1e3))
    fig, ax = plt.subplots(figsize=(7, 5))
    for name, pts in sorted(series.items()):
        pts.sort()
        ax.loglog([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    ax.set_xlabel("DOF (2D Poisson)")
    ax.set_ylabel("ms per CG iteration (fixed iteration count, median of 3)")
    ax.set_title("CG time per iteration on 2D Poisson, float64")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "sla_cg_time_per_iteration.png"), dpi=110)


def plot_spmv(lines, out):
    rows = [l for l in lines if l.get("bench") == "spmv"]
    sizes = sorted({l["rows"] for l in rows})
    formats = sorted({l["format"] for l in rows})
    fig, ax = plt.subplots(figsize=(7, 5))
    width = 0.8 / max(1, len(formats))
    for k, fmt in enumerate(formats):
        vals = [next((l["bandwidth_gbs"] for l in rows if l["rows"] == s and l["format"] == fmt), 0) for s in sizes]
        ax.bar([i + k * width for i in range(len(sizes))], vals, width, label=fmt)
    for i, s in enumerate(sizes):
        stream = next(l["stream_gbs"] for l in rows if l["rows"] == s)
        ax.hlines(stream, i - 0.1, i + 0.9, colors="k", linestyles="dashed")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(sizes))])
    ax.set_xticklabels([f"{s / 1e6:g}M rows" for s in sizes])
    ax.set_ylabel("GB/s (bytes of the format / time); dashed: STREAM triad")
    ax.set_title("SpMV on 2D Poisson")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "sla_spmv_bandwidth.png"), dpi=110)


def plot_amg(lines, out):
    """Iterations (left) and seconds to solution (right) of CG + AMG on 2D Poisson per rtol."""
    series = collections.defaultdict(dict)
    for l in lines:
        amg = l.get("bench") == "amg" and l.get("case") == "poisson2d" and l.get("preconditioner") == "amg"
        scale = l.get("bench") == "scale" and l.get("preconditioner") == "amg"
        if (amg or scale) and l.get("status") == "converged":
            seconds = l.get("seconds_to_solution", l.get("solve_seconds"))
            series[f'rtol {l["rtol"]:g}'][l["dof"]] = (l["iterations"], seconds)
    if not series:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.5))
    for name, pts in sorted(series.items()):
        dofs = sorted(pts)
        left.semilogx(dofs, [pts[d][0] for d in dofs], marker="o", label=name)
        right.loglog(dofs, [pts[d][1] for d in dofs], marker="o", label=name)
    left.set_xlabel("DOF (2D Poisson)")
    left.set_ylabel("CG + AMG iterations")
    left.set_ylim(0, 35)   # the target: at most 30 iterations (dashed)
    left.axhline(30, color="k", linestyle="dashed", linewidth=0.8)
    right.set_xlabel("DOF (2D Poisson)")
    right.set_ylabel("seconds to solution (set-up included)")
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Smoothed-aggregation AMG-CG on 2D Poisson, float64")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "sla_amg_scaling.png"), dpi=110)


def main():
    lines = load(sys.argv[1])
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(sys.argv[1])
    plot_cg(lines, out)
    plot_spmv(lines, out)
    amg = [l for path in sys.argv[3:] for l in load(path)]
    plot_amg(lines + amg, out)


if __name__ == "__main__":
    main()
