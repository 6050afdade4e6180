#!/usr/bin/env bash
# Strong (fixed 4M DOF) and weak (2M DOF per rank) scaling of distributed CG on 2D
# Poisson at 1, 2 and 4 ranks, one thread per rank. Prints the JSON lines and a table of
# parallel efficiency. Usage: bench/dist_cg_scaling.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
export GLOG_minloglevel=2 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TESSERA_THREADS=1
out=$(mktemp)
for np in 1 2 4; do
  mpirun --oversubscribe --bind-to none -np $np "$build/tessera" bench dist-cg --n 2000 --iterations 20 | tee -a "$out"
done
for np in 1 2 4; do
  mpirun --oversubscribe --bind-to none -np $np "$build/tessera" bench dist-cg --dof-per-rank 2000000 --iterations 20 | tee -a "$out"
done
/usr/bin/python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
strong, weak = rows[:3], rows[3:]  # the runs above: 3 strong, then 3 weak
print("| mode | ranks | DOF | s/iteration | halo bytes/iteration | efficiency |")
print("|---|---|---|---|---|---|")
for mode, runs in (("strong", strong), ("weak", weak)):
    base = runs[0]["seconds_per_iteration_median"]
    for r in runs:
        t = r["seconds_per_iteration_median"]
        eff = base / (t * r["ranks"]) if mode == "strong" else base / t
        print(f"| {mode} | {r['ranks']} | {r['dof']} | {t:.4f} | {r['halo_bytes_per_iteration']} | {eff:.2f} |")
PY
rm -f "$out"
