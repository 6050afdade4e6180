#!/usr/bin/python3
"""PNG plots of the sla benchmarks from the JSON lines kept in bench/results/ (every point is read
from a file named in the figure's title; nothing is typed in here):

  sla_cg_time_per_iteration.png  left: time per CG iteration vs DOF for every solver on 2D Poisson
                                 (sla_perf.jsonl, 2026-11-30); right: CG per iteration at 1M DOF on
                                 the generated matrices vs Eigen and SciPy (sla_perf_general_s36.jsonl)
  sla_spmv_bandwidth.png         SpMV bandwidth per storage form and size vs STREAM triad, 2D Poisson
                                 (sla_perf.jsonl)
  sla_amg_scaling.png            AMG-CG iterations and time to solution vs DOF on 2D Poisson
                                 (sla_idle_batch.jsonl, amg_generated_s19.jsonl, sla_memory_per_dof.jsonl)
  sla_spmv_fraction_of_stream.png  SpMV at 16M rows on diffusion2d / fe2d: fraction of the same round's
                                 STREAM triad per kernel, 5 rounds (spmv_general_16M_s36.jsonl)
  sla_amg_iterations.png         AMG-CG iterations vs DOF, 2D/3D Poisson and the generated matrices
                                 (amg_generated_s19.jsonl, sla_memory_per_dof.jsonl, sla_scale_3d_s22/s23.jsonl)
  sla_memory_per_dof.png         MemoryLedger bytes per DOF, CSR vs matrix-free, vs DOF
                                 (sla_memory_per_dof.jsonl, sla_scale_3d_s22/s23.jsonl)
  sla_eigsh_peers.png            eigsh seconds vs SciPy at n = 1e4 and 1e6, 2D Poisson
                                 (eigsh_peers_n1e4_s23.jsonl, eigsh_peers_n1e6_s23.jsonl)

  /usr/bin/python3 bench/plot_sla.py [results_dir [out_dir]]     (default: bench/results for both)
A plot whose files are missing is skipped (with a line on stderr).
"""
import collections
import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


# CG per iteration on the generated matrices at 1M DOF: 5 rounds of tessera, Eigen and SciPy
GENERAL_CG = "sla_perf_general_s36.jsonl"
# SpMV at 16M rows: 5 rounds of (triad, CSR, SELL-C-σ, symmetric SELL) and when they ran
SPMV_16M, SPMV_16M_WHEN = "spmv_general_16M_s36.jsonl", "2026-12-05 10:09-10:11 UTC"

def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def meta_span(lines):
    """'date first - last, load a-b' from the meta lines (bench/sla_peers.sh-style scripts)."""
    dates = [l["date"] for l in lines if l.get("bench") == "meta" and "date" in l]
    loads = [float(l["loadavg"].split()[0]) for l in lines if l.get("bench") == "meta" and l.get("loadavg")]
    text = ""
    if dates:
        first, last = dates[0].replace("T", " ").rstrip("Z"), dates[-1].replace("T", " ").rstrip("Z")
        text = first if first[:10] != last[:10] or len(first) <= 10 else f"{first}-{last[11:19]}"
        text += " UTC" if len(first) > 10 else ""
    if loads:
        text += f", load {min(loads):.1f}-{max(loads):.1f}"
    return text


def save(fig, out, name):
    path = os.path.join(out, name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(path)


def label(l):
    if l.get("bench") == "cg":
        return f'tessera CG ({l["format"]}, {l["preconditioner"]})'
    if l.get("solver") == "eigen-cg":
        return f'Eigen CG ({l["preconditioner"]}, {l["threads"]} threads)'
    return {"scipy-cg": "SciPy CG", "torch-cg": "torch CSR CG"}.get(l.get("solver"))


def tag_batches(lines):
    """Each line with the 'what' of the last meta line before it (the batch it ran in)."""
    what, out = "", []
    for l in lines:
        if l.get("bench") == "meta":
            what = l.get("what", "")
        else:
            out.append((what, l))
    return out


def plot_cg(lines, idle, general, out):
    """Left: 2D Poisson vs DOF (sla_perf.jsonl; sla_idle_batch.jsonl's paused batches dashed).
    Right: the generated matrices at 1M (GENERAL_CG), rounds of tessera, Eigen and SciPy."""
    series = collections.defaultdict(list)
    sources = [("", l) for l in lines] + [(w, l) for w, l in tag_batches(idle) if "paused" in w]
    for what, l in sources:
        if (l.get("seconds_per_iteration_median") or 0) > 0 and l.get("rtol") == 0 and label(l):
            series[label(l) + (" [paused batch]" if what else "")].append((l["dof"], l["seconds_per_iteration_median"] * 1e3))
    fig, (ax, right) = plt.subplots(1, 2, figsize=(14, 5.8), gridspec_kw={"width_ratios": [1.3, 1]})
    colors = {}
    for name, pts in sorted(series.items()):
        pts.sort()
        base = name.replace(" [paused batch]", "")
        colors.setdefault(base, f"C{len(colors)}")
        paused = name != base
        ax.loglog([p[0] for p in pts], [p[1] for p in pts], "--" if paused else "-", marker="s" if paused else "o",
                  color=colors[base], mfc="none" if paused else colors[base], label=name)
    ax.set_xlabel("DOF (2D Poisson)")
    ax.set_ylabel("ms per CG iteration (fixed iteration count, median of 3)")
    ax.set_title(f"2D Poisson, float64. solid: results/sla_perf.jsonl ({meta_span(lines)});\n"
                 f"dashed: sla_idle_batch.jsonl, helpers paused ({meta_span(idle)})", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="lower right")
    if general:
        # one bar per solver (tessera: solve's default product and plain CSR): the median over rounds
        def series_of(l):
            if l.get("solver") == "tessera-cg":
                return {"auto": f"tessera CG + Jacobi (default: {l.get('kernel', 'auto')})",
                        "csr": "tessera CG + Jacobi, CSR"}.get(l.get("format"))
            return {"eigen-cg": "Eigen CG + diagonal", "scipy-cg-jacobi": "SciPy CG + Jacobi"}.get(l.get("solver"))
        rows = [l for l in general if series_of(l) and (l.get("seconds_per_iteration_median") or 0) > 0]
        matrices = list(dict.fromkeys(l["matrix"] for l in rows))
        solvers = list(dict.fromkeys(series_of(l) for l in rows))
        width = 0.8 / len(solvers)
        for k, s in enumerate(solvers):
            threads = sorted({l["threads"] for l in rows if series_of(l) == s})
            vals = [statistics.median([l["seconds_per_iteration_median"] * 1e3 for l in rows
                                       if series_of(l) == s and l["matrix"] == m] or [0]) for m in matrices]
            bars = right.bar([i + k * width for i in range(len(matrices))], vals, width,
                             label=f'{s} ({"/".join(map(str, threads))} thread{"s" if threads != [1] else ""})')
            right.bar_label(bars, fmt="%.1f", fontsize=7)
        dofs = sorted({l["dof"] for l in rows})
        rounds = max(collections.Counter((series_of(l), l["matrix"]) for l in rows).values())
        right.set_xticks([i + 0.4 - width / 2 for i in range(len(matrices))])
        right.set_xticklabels(matrices)
        right.set_ylabel(f"ms per CG iteration (100 iterations; median of {rounds} rounds)")
        right.set_title(f"generated matrices at {', '.join(f'{d:,}' for d in dofs)} DOF, float64\n"
                        f"results/{GENERAL_CG} ({meta_span(general)})", fontsize=9)
        right.legend(fontsize=7)
        right.grid(True, axis="y", alpha=0.3)
    fig.suptitle("CG time per iteration")
    fig.tight_layout()
    save(fig, out, "sla_cg_time_per_iteration.png")


def plot_spmv(lines, idle, out):
    """Bandwidth per storage form, one group per run: sla_perf.jsonl and the paused batches of
    sla_idle_batch.jsonl (each tessera run with its own triad, dashed)."""
    groups = collections.OrderedDict()
    tagged = [("sla_perf", l) for l in lines] + [(f"idle {w.split()[0]}", l) for w, l in tag_batches(idle) if "paused" in w]
    for src, l in tagged:
        if l.get("bench") == "spmv":
            groups.setdefault((src, l["rows"], round(l["stream_gbs"], 1)), []).append(l)
    if not groups:
        return
    formats = sorted({l["format"] for g in groups.values() for l in g})
    fig, ax = plt.subplots(figsize=(11, 5.5))
    width = 0.8 / max(1, len(formats))
    for k, fmt in enumerate(formats):
        vals = [next((l["bandwidth_gbs"] for l in g if l["format"] == fmt), 0) for g in groups.values()]
        ax.bar([i + k * width for i in range(len(groups))], vals, width, label=fmt, color=f"C{k}")
    for i, ((src, rows, stream), g) in enumerate(groups.items()):
        ax.hlines(stream, i - 0.1, i + 0.9, colors="k", linestyles="dashed")
        ax.text(i + 0.4 - width / 2, stream + 0.6, f"triad {stream:.1f}", ha="center", fontsize=7)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(groups))])
    ax.set_xticklabels([f"{rows / 1e6:g}M rows\n{src}" for src, rows, _ in groups], fontsize=8)
    ax.set_ylabel("GB/s (bytes of the format / time); dashed: STREAM triad")
    ax.set_ylim(0, max(k[2] for k in groups) * 1.12)
    ax.set_title(f"SpMV on 2D Poisson, 2 threads\nresults/sla_perf.jsonl ({meta_span(lines)}); "
                 f"\nsla_idle_batch.jsonl, batches with helpers paused ({meta_span(idle)}, the load lags the pause)", fontsize=8)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    save(fig, out, "sla_spmv_bandwidth.png")


def plot_amg(idle, generated, memory, out):
    """Iterations (left) and seconds to solution (right) of CG + AMG on 2D Poisson, one series per source."""
    series = collections.defaultdict(dict)
    for l in idle:   # the 2026-11-30 lines: the last line of a size wins, as before
        amg = l.get("bench") == "amg" and l.get("case") == "poisson2d" and l.get("preconditioner") == "amg"
        scale = l.get("bench") == "scale" and l.get("preconditioner") == "amg"
        if (amg or scale) and l.get("status") == "converged":
            seconds = l.get("seconds_to_solution", l.get("solve_seconds"))
            series[f'rtol {l["rtol"]:g}, 2 threads (sla_idle_batch, 11-30)'][l["dof"]] = (l["iterations"], seconds)
    for l in generated:
        if l.get("case") == "poisson2d" and "after" in l.get("code", "") and l.get("status") == "converged":
            series[f'rtol {l["rtol"]:g}, 1 thread, 40455a8 (amg_generated_s19, 12-02, load 8-10)'][l["dof"]] = (l["iterations"], l["seconds_to_solution"])
    for l in memory:
        if l.get("bench") == "scale" and l.get("matrix") and l.get("status") == "converged":
            form = "matrix-free" if l["matrix"] == "stencil" else l["matrix"].upper()
            series[f'rtol {l["rtol"]:g}, {form}, 2 threads (sla_memory_per_dof, 12-03)'][l["dof"]] = (l["iterations"], l["solve_seconds"])
    if not series:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5))
    for name, pts in sorted(series.items()):
        dofs = sorted(pts)
        left.semilogx(dofs, [pts[d][0] for d in dofs], marker="o", label=name)
        right.loglog(dofs, [pts[d][1] for d in dofs], marker="o", label=name)
    left.set_xlabel("DOF (2D Poisson)")
    left.set_ylabel("CG + AMG iterations")
    left.set_ylim(0, 35)
    left.axhline(30, color="k", linestyle="dashed", linewidth=0.8)
    left.text(left.get_xlim()[0] * 1.1, 30.5, "target: at most 30", fontsize=8)
    right.set_xlabel("DOF (2D Poisson)")
    right.set_ylabel("seconds to solution (s19, 11-30: set-up included; scale: solve)")
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
    left.legend(fontsize=7, loc="lower right")
    fig.suptitle("Smoothed-aggregation AMG-CG on 2D Poisson, float64 - results/sla_idle_batch.jsonl (2026-11-30), "
                 "amg_generated_s19.jsonl (2026-12-02), sla_memory_per_dof.jsonl (2026-12-03)", fontsize=9)
    fig.tight_layout()
    save(fig, out, "sla_amg_scaling.png")


def plot_spmv_fraction(lines, out):
    rows = [l for l in lines if l.get("bench") == "spmv"]
    if not rows:
        return
    matrices = list(dict.fromkeys(l["matrix"] for l in rows))
    kernels = {m: list(dict.fromkeys(l["kernel"] for l in rows if l["matrix"] == m)) for m in matrices}
    fig, ax = plt.subplots(figsize=(9, 5.2))
    colors = {"csr": "C0", "sell": "C1", "csr-f32values": "C2", "sell-sym": "C4"}
    x, ticks, labels = 0, [], []
    for m in matrices:
        for k in kernels[m]:
            pts = sorted((l["round"], l["fraction_of_stream"], l["csr_equivalent_fraction_of_stream"]) for l in rows
                         if l["matrix"] == m and l["kernel"] == k)
            fmt = next(l["format"] for l in rows if l["matrix"] == m and l["kernel"] == k)
            c = colors.get(fmt, "C3")
            own = [p[1] for p in pts]
            ax.scatter([x + 0.06 * (p[0] - 2) for p in pts], own, color=c, s=22, zorder=3)
            med = statistics.median(own)
            ax.hlines(med, x - 0.3, x + 0.3, color=c, linewidth=2.5)
            ax.text(x + 0.32, med, f"{med:.2f}", va="center", fontsize=8)
            equiv = [p[2] for p in pts]
            if max(abs(a - b) for a, b in zip(own, equiv)) > 0.02:   # csr-f32values, sell-sym: their own bytes are fewer
                ax.scatter([x + 0.06 * (p[0] - 2) for p in pts], equiv, facecolors="none", edgecolors=c, s=30, zorder=3)
                ax.hlines(statistics.median(equiv), x - 0.3, x + 0.3, color=c, linewidth=1.2, linestyle="dotted")
                ax.text(x + 0.32, statistics.median(equiv), f"{statistics.median(equiv):.2f} (CSR bytes)", va="center", fontsize=7)
            ticks.append(x)
            labels.append(f"{m}\n{k}")
            x += 1
        x += 0.6
    ax.axhline(0.8, color="k", linestyle="dashed", linewidth=1)
    ax.text(x - 1.0, 0.81, "target 0.8", fontsize=8, ha="right")
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("SpMV GB/s / same round's STREAM triad GB/s")
    ax.set_ylim(0, max(max(l["fraction_of_stream"], l["csr_equivalent_fraction_of_stream"]) for l in rows) * 1.15)
    ax.grid(True, axis="y", alpha=0.3)
    loads = [l["loadavg_1min"] for l in rows if "loadavg_1min" in l]
    nnz = {m: next(l["nnz"] for l in rows if l["matrix"] == m) for m in matrices}
    stream = [l["stream_gbs"] for l in rows]
    ax.set_title(f"SpMV at {rows[0]['rows'] / 1e6:g}M rows, {rows[0]['threads']} threads, idle machine (load {min(loads):.1f}-{max(loads):.1f}, "
                 f"its own threads); dots: {len({l['round'] for l in rows})} rounds, bar: median\n"
                 f"nnz {', '.join(f'{m} {v / 1e6:.1f}M' for m, v in nnz.items())}; triad {min(stream):.1f}-{max(stream):.1f} GB/s; "
                 "filled: bytes of the kernel's format, hollow: float64 CSR bytes\n"
                 f"results/{SPMV_16M} ({SPMV_16M_WHEN})", fontsize=8)
    fig.tight_layout()
    save(fig, out, "sla_spmv_fraction_of_stream.png")


def plot_amg_iterations(generated, memory, scale3d, out):
    series = collections.defaultdict(set)
    names = {"poisson2d": "2D Poisson", "poisson3d": "3D Poisson", "diffusion2d": "2D log-normal diffusion",
             "diffusion3d": "3D log-normal diffusion", "fe": "FE Laplacian"}
    for l in generated:
        if l.get("status") == "converged" and "after" in l.get("code", ""):
            extra = f", sigma {l['sigma']:g}" if l.get("sigma", 1.0) != 1.0 else ""
            series[f"{names.get(l['case'], l['case'])}{extra}, rtol {l['rtol']:g} (s19)"].add((l["dof"], l["iterations"]))
    for l in memory:
        if l.get("bench") == "scale" and l.get("matrix") and l.get("status") == "converged":
            series[f"2D Poisson, rtol {l['rtol']:g} (bench scale, memory_per_dof)"].add((l["dof"], l["iterations"]))
    for l in scale3d:
        if l.get("bench") == "scale":
            series[f"3D Poisson, rtol {l.get('rtol', 1e-6):g} (bench scale, {l['when']})"].add((l["dof"], l["iterations"]))
    if not series:
        return
    fig, ax = plt.subplots(figsize=(10, 5.8))
    for name, pts in sorted(series.items()):
        pts = sorted(pts)
        style = "--" if "bench scale" in name else "-"
        ax.semilogx([p[0] for p in pts], [p[1] for p in pts], style, marker="o", label=name)
        for d, it in pts:
            if it > 30:
                ax.annotate(f"{it} at {d / 1e6:.1f}M", (d, it), textcoords="offset points", xytext=(-70, -4), fontsize=8)
    ax.axhline(30, color="k", linestyle="dashed", linewidth=0.8)
    ax.text(5e4, 31, "target: at most 30 iterations", fontsize=8)
    ax.set_xlabel("DOF")
    ax.set_ylabel("CG + AMG iterations (default V-cycle)")
    ax.set_ylim(0, max(p[1] for pts in series.values() for p in pts) * 1.08)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title("AMG-CG iterations vs DOF (solid: rtol 1e-8, b = rand, 1 thread, code 40455a8; dashed: bench scale, rtol 1e-6, 2 threads)\n"
                 "results/amg_generated_s19.jsonl (2026-12-02 14:05-14:22 UTC, load 7-10), sla_memory_per_dof.jsonl (2026-12-03 04:41-04:55),\n"
                 "sla_scale_3d_s22.jsonl (2026-12-03 05:54-06:00, dffdc56), sla_scale_3d_s23.jsonl (06:56-08:19, before / after c88cd64)", fontsize=8)
    fig.tight_layout()
    save(fig, out, "sla_amg_iterations.png")


def plot_memory(memory, scale3d, out):
    series = collections.defaultdict(list)
    for l in memory + scale3d:
        if l.get("bench") != "scale":
            continue
        dims = l.get("dims", 2)
        if l.get("code", "").endswith("(before)"):
            name = f"{dims}D CSR, before ({l['code'].split()[0]})"
        else:
            name = f"{dims}D {'matrix-free (stencil)' if l.get('matrix') == 'stencil' else 'CSR'}"
            if "when" in l:
                name += f", {l['when']}"
        series[name].append((l["dof"], l["ledger_bytes_per_dof"]))
    if not series:
        return
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for name, pts in sorted(series.items()):
        pts.sort()
        style = ":" if "before" in name else ("-" if name.startswith("2D") else "--")
        ax.semilogx([p[0] for p in pts], [p[1] for p in pts], style, marker="o", label=name)
        for d, b in pts:
            ax.annotate(f"{b:.0f}", (d, b), textcoords="offset points", xytext=(5, 4), fontsize=7)
    ax.axhline(150, color="k", linestyle="dashed", linewidth=1)
    ax.text(3.5e6, 152, "target 150 B/DOF", fontsize=8)
    ax.set_xlabel("DOF (Poisson, AMG-CG to rtol 1e-6, tessera bench scale, 2 threads)")
    ax.set_ylabel("MemoryLedger peak bytes per DOF (matrix + b + solve)")
    ax.set_ylim(0, max(p[1] for pts in series.values() for p in pts) * 1.12)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("Bytes per DOF, CSR vs matrix-free\nresults/sla_memory_per_dof.jsonl (2026-12-03 04:41-04:55 UTC, 56253d1 / 8414ee2; 151M: dd814cb, load 1.6-3.4),\n"
                 "sla_scale_3d_s22.jsonl (2026-12-03 05:54-06:00, dffdc56, load 0.7-2.0), sla_scale_3d_s23.jsonl (06:56-08:19, load 2.0-3.9)", fontsize=8)
    fig.tight_layout()
    save(fig, out, "sla_memory_per_dof.png")


def plot_eigsh(small, large, out):
    if not small and not large:
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.2))
    for ax, lines, fname in ((axes[0], small, "eigsh_peers_n1e4_s23.jsonl"), (axes[1], large, "eigsh_peers_n1e6_s23.jsonl")):
        rows = [l for l in lines if l.get("bench") == "eigsh"]
        if not rows:
            continue
        n = rows[0]["n"]
        modes = list(dict.fromkeys(l["mode"] for l in rows))

        def name(l):
            if l["backend"].startswith("scipy"):
                return "SciPy eigsh (ARPACK)"
            if l["backend"] == "auto":
                return "tessera auto" + (" (shift-invert)" if l.get("shift_invert") else "")
            return f"tessera {l['backend']} (on A)"
        backends = list(dict.fromkeys(name(l) for l in rows))
        width = 0.8 / len(backends)
        limit = max((l.get("timeout_seconds", 0) for l in rows), default=0)
        for k, b in enumerate(backends):
            for i, m in enumerate(modes):
                l = next((r for r in rows if name(r) == b and r["mode"] == m), None)
                if l is None:
                    continue
                xpos = i + k * width
                if l.get("seconds") is not None:
                    ax.bar(xpos, l["seconds"], width, color=f"C{k}", label=b if i == 0 else None)
                    ax.text(xpos, l["seconds"] * 1.05, f"{l['seconds']:.3g} s", ha="center", fontsize=7)
                elif l.get("timeout_seconds"):
                    ax.bar(xpos, l["timeout_seconds"], width, color="white", edgecolor=f"C{k}", hatch="//",
                           label=f"{b}: not finished" if i == 0 else None)
                    ax.text(xpos, l["timeout_seconds"] * 1.05, f"> {l['timeout_seconds']:g} s\n(stopped)", ha="center", fontsize=7)
        if limit:
            ax.axhline(limit, color="k", linestyle="dotted", linewidth=0.8)
        ax.set_ylim(0, max([l.get("seconds") or 0 for l in rows] + [limit]) * 1.2)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(modes))])
        ax.set_xticklabels([f"6 {m}" for m in modes])
        ax.set_ylabel("seconds (best of the repeats in the start line)")
        start = next((l["what"] for l in lines if l.get("bench") == "meta" and l.get("what", "").startswith("start")), "")
        ax.set_title(f"2D Poisson n = {n:,}; {start.replace('start ', '')}\nresults/{fname} ({meta_span(lines)})", fontsize=8)
        ax.legend(fontsize=7, loc="upper left")
        ax.grid(True, axis="y", which="both", alpha=0.3)
    fig.suptitle("eigsh, k = 6, default options, vs SciPy eigsh (same run, one thread)")
    fig.tight_layout()
    save(fig, out, "sla_eigsh_peers.png")


def main():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    results = sys.argv[1] if len(sys.argv) > 1 else here
    out = sys.argv[2] if len(sys.argv) > 2 else results

    def get(name):
        path = os.path.join(results, name)
        if not os.path.exists(path):
            print(f"missing {path}: its plots are skipped or partial", file=sys.stderr)
            return []
        return load(path)

    perf = get("sla_perf.jsonl")
    idle, generated, memory = get("sla_idle_batch.jsonl"), get("amg_generated_s19.jsonl"), get("sla_memory_per_dof.jsonl")
    # 3D Poisson: session 22's runs and session 23's before / after the per-level strength (c88cd64)
    scale3d = [dict(l, when="before c88cd64") for l in get("sla_scale_3d_s22.jsonl")]
    scale3d += [dict(l, when="before c88cd64" if l.get("code", "").startswith("487088b") else "after c88cd64")
                for l in get("sla_scale_3d_s23.jsonl")]
    if perf:
        plot_cg(perf, idle, get(GENERAL_CG), out)
        plot_spmv(perf, idle, out)
    plot_amg(idle, generated, memory, out)
    plot_spmv_fraction(get(SPMV_16M), out)
    plot_amg_iterations(generated, memory, scale3d, out)
    plot_memory(memory, scale3d, out)
    plot_eigsh(get("eigsh_peers_n1e4_s23.jsonl"), get("eigsh_peers_n1e6_s23.jsonl"), out)


if __name__ == "__main__":
    main()
