#!/usr/bin/python3
"""Ratios of the sla performance targets (issue 9, items 1-2) from the JSON lines that
bench/sla_peers.sh wrote: prints one JSON object.

  /usr/bin/python3 bench/sla_ratios.py bench/results/sla_perf.jsonl
"""
import json
import statistics
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def per_iteration(lines, dof, **match):
    """Seconds per iteration of the matching line: fixed-iteration runs (rtol 0) first."""
    for fixed in (True, False):
        for l in lines:
            if (l.get("dof") == dof and (l.get("rtol") == 0) == fixed and (l.get("seconds_per_iteration_median") or 0) > 0
                    and all(l.get(k) == v for k, v in match.items())):
                return l["seconds_per_iteration_median"]
    return None


def ratio(a, b):
    return a / b if a and b else None


def rounds(lines):
    """The lines of every general-matrix round: {(matrix, dof, round): [lines]}, from the
    meta line ("cg general matrix=M n=N ... round=R") that precedes each run."""
    out, key = {}, None
    for l in lines:
        if l.get("bench") == "meta":
            what = dict(kv.split("=", 1) for kv in l.get("what", "").split() if "=" in kv)
            key = (what["matrix"], what.get("round", "1")) if l["what"].startswith("cg general") else None
        elif key is not None and l.get("dof"):
            out.setdefault((key[0], l["dof"], key[1]), []).append(l)
    return out


def general_round(lines):
    """One round's seconds per iteration and ratios: tessera + Jacobi with solve's default
    product ("auto": SELL-C-sigma or CSR by the cheap rule; a stencil-form line is left out)
    and with the plain CSR product, against Eigen (diagonal) and SciPy (Jacobi)."""
    dof = lines[0]["dof"]
    general = [l for l in lines if l.get("kernel") != "stencil"]
    ours = per_iteration(general, dof, bench="cg", format="auto", preconditioner="jacobi")
    csr = per_iteration(lines, dof, bench="cg", format="csr", preconditioner="jacobi")
    eig = per_iteration(lines, dof, solver="eigen-cg", preconditioner="diagonal")
    sci = per_iteration(lines, dof, solver="scipy-cg-jacobi")
    kernel = next((l["kernel"] for l in general if l.get("format") == "auto"), None)
    return {"tessera_jacobi_s": ours, "tessera_kernel": kernel, "tessera_csr_jacobi_s": csr,
            "eigen_diagonal_s": eig, "scipy_jacobi_s": sci,
            "eigen_over_tessera": ratio(eig, ours), "scipy_over_tessera": ratio(sci, ours),
            "eigen_over_tessera_csr": ratio(eig, csr), "scipy_over_tessera_csr": ratio(sci, csr)}


def general_cg(lines):
    """CG per iteration on the generated matrices that are not stencils, never mixed with the
    Poisson figures: every round's figures (general_round) and, per matrix, the median of the
    rounds' ratios."""
    out = {}
    by_round = rounds(lines)
    for matrix, dof in sorted({(m, d) for (m, d, _) in by_round}):
        per_round = [general_round(by_round[k]) for k in sorted(by_round, key=lambda k: int(k[2]))
                     if k[0] == matrix and k[1] == dof]
        summary = {}
        for key in ("eigen_over_tessera", "scipy_over_tessera", "eigen_over_tessera_csr", "scipy_over_tessera_csr"):
            values = [r[key] for r in per_round if r[key] is not None]
            summary[f"{key}_median"] = statistics.median(values) if values else None
        out[f"{matrix} {dof}"] = {**summary, "rounds": per_round}
    return out


def main():
    everything = load(sys.argv[1])
    lines = [l for l in everything if l.get("matrix", "poisson2d") == "poisson2d"]   # 2D Poisson only
    out = {"cg": {}, "spmv": [], "direct": {}, "cg_floor": [], "cg_general": general_cg(everything)}
    for dof in sorted({l["dof"] for l in lines if l.get("bench") == "cg"}):
        ours = per_iteration(lines, dof, bench="cg", format="stencil", preconditioner="none")
        ours_csr = per_iteration(lines, dof, bench="cg", format="csr", preconditioner="none")
        ours_jac = per_iteration(lines, dof, bench="cg", format="stencil", preconditioner="jacobi")
        ours_csr_jac = per_iteration(lines, dof, bench="cg", format="csr", preconditioner="jacobi")
        eig = per_iteration(lines, dof, solver="eigen-cg", preconditioner="diagonal")
        eig_id = per_iteration(lines, dof, solver="eigen-cg", preconditioner="identity")
        sci = per_iteration(lines, dof, solver="scipy-cg")
        tor = per_iteration(lines, dof, solver="torch-cg")
        out["cg"][str(dof)] = {
            "tessera_stencil_none_s": ours, "tessera_csr_none_s": ours_csr,
            "tessera_stencil_jacobi_s": ours_jac, "tessera_csr_jacobi_s": ours_csr_jac,
            "eigen_diagonal_s": eig, "eigen_identity_s": eig_id, "scipy_s": sci, "torch_csr_s": tor,
            "eigen_over_tessera": ratio(eig, ours_jac), "eigen_over_tessera_csr": ratio(eig, ours_csr_jac),
            "eigen_identity_over_tessera": ratio(eig_id, ours), "eigen_identity_over_tessera_csr": ratio(eig_id, ours_csr),
            "scipy_over_tessera": ratio(sci, ours), "scipy_over_tessera_csr": ratio(sci, ours_csr),
            "torch_over_tessera": ratio(tor, ours), "torch_over_tessera_csr": ratio(tor, ours_csr),
        }
    for l in lines:
        if l.get("bench") == "spmv" or l.get("solver") == "plain-openmp-csr-spmv":
            out["spmv"].append({k: l[k] for k in ("rows", "seconds_per_spmv_median", "bandwidth_gbs",
                                                  "stream_gbs", "fraction_of_stream")})
            out["spmv"][-1]["format"] = l.get("format", l.get("solver"))
        if l.get("bench") == "cg":
            out["cg_floor"].append({k: l[k] for k in ("dof", "format", "preconditioner", "rtol", "iterations",
                                                      "seconds_per_iteration_median", "floor_seconds_per_iteration",
                                                      "ratio_to_floor", "stream_gbs")})
    ours = next((l for l in lines if l.get("bench") == "direct"), None)
    peer = next((l for l in lines if l.get("solver") == "scipy-spsolve"), None)
    if ours and peer:
        out["direct"] = {"dof": ours["dof"], "tessera_auto_s": ours["seconds_median"],
                         "tessera_ran": f'{ours["ran_backend"]} {ours["ran_method"]}',
                         "scipy_spsolve_s": peer["seconds_median"],
                         "spsolve_over_tessera": ratio(peer["seconds_median"], ours["seconds_median"])}
    out["loadavg"] = [l["loadavg"] for l in everything if l.get("bench") == "meta"]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
