#!/usr/bin/env bash
# The distributed sla API against one process: bench_dist_api at 1, 2 and 4 ranks (one
# thread per rank; on a 2-core machine 4 ranks oversubscribe the cores), then a table of
# the seconds with the ratio to one process's function.
# Usage: bench/dist_api.sh [BUILD_DIR] [m ...]   (default build, m = 100)
set -euo pipefail
build=${1:-build}
shift || true
grids=("$@")
[ ${#grids[@]} -gt 0 ] || grids=(100)
export GLOG_minloglevel=2 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TESSERA_THREADS=1 OMP_NUM_THREADS=1
out=$(mktemp)
for np in 1 2 4; do
  mpirun --oversubscribe --bind-to none -np "$np" "$build/bench_dist_api" "${grids[@]}" | tee -a "$out"
done
/usr/bin/python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
one = {(r["operation"], r["n"]): r["seconds"] for r in rows if r["api"] == "one_process"}
print("| operation | n | one process s | 1 rank s | 2 ranks s | 4 ranks s | 4 ranks / one process |")
print("|---|---|---|---|---|---|---|")
for (op, n), t1 in one.items():
    d = {r["ranks"]: r["seconds"] for r in rows if r["api"] == "distributed" and r["operation"] == op and r["n"] == n}
    print(f"| {op} | {n} | {t1:.3f} | {d.get(1, float('nan')):.3f} | {d.get(2, float('nan')):.3f} | "
          f"{d.get(4, float('nan')):.3f} | {d.get(4, float('nan')) / t1:.2f} |")
PY
rm -f "$out"
