#!/usr/bin/env bash
# Strong (fixed 4M DOF) and weak (1M DOF per rank) scaling of distributed CG on 2D Poisson
# at 1, 2 and 4 ranks, one thread per rank, with Jacobi (20 iterations: the time per
# iteration, median of 2 runs) and with hypre's BoomerAMG (solved to rtol 1e-8: iterations, set-up time, time
# per iteration). Prints the JSON lines and a table with the parallel efficiency of the
# time per iteration. Usage: bench/dist_cg_scaling.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
export GLOG_minloglevel=2 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TESSERA_THREADS=1
out=$(mktemp)
run() {  # run NP MODE ARGS...
  local np=$1 mode=$2; shift 2
  mpirun --oversubscribe --bind-to none -np "$np" "$build/tessera" bench dist-cg "$@" |
    sed "s/^{/{\"mode\":\"$mode\",/" | tee -a "$out"
}
for pc in jacobi boomeramg; do
  if [ $pc = jacobi ]; then solve=(--iterations 20 --repeats 2); else solve=(--preconditioner boomeramg --rtol 1e-8 --repeats 2); fi
  for np in 1 2 4; do run $np strong --n 2000 "${solve[@]}"; done
  for np in 1 2 4; do run $np weak --dof-per-rank 1000000 "${solve[@]}"; done
done
/usr/bin/python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print("| mode | preconditioner | ranks | DOF | iterations | set-up s | s/iteration | solve s | efficiency |")
print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    base = next(b for b in rows if b["mode"] == r["mode"] and b["preconditioner"] == r["preconditioner"] and b["ranks"] == 1)
    t, t1 = r["seconds_per_iteration_median"], base["seconds_per_iteration_median"]
    eff = t1 / (t * r["ranks"]) if r["mode"] == "strong" else t1 / t
    setup = r["preconditioner_setup_seconds_median"]
    its = r["iterations"] if r["rtol"] > 0 else f"{r['iterations']} (fixed)"
    print(f"| {r['mode']} | {r['preconditioner']} | {r['ranks']} | {r['dof']} | {its} | {setup:.2f} | {t:.4f} | "
          f"{r['solve_seconds_median']:.2f} | {eff:.2f} |")
PY
rm -f "$out"
