#!/usr/bin/env bash
# Usage: compare_distributed_solve.sh TESSERA MPIRUN... -- SOLVE_ARGS...
# Runs `tessera solve SOLVE_ARGS --json` single-process and under MPIRUN at 2 and 4 ranks;
# passes when every run converges with the same iteration count and the relative residuals
# agree to 10%: inner products summed over ranks round differently (and one process runs the
# fused CG loop, whose update order differs), and the final residual of an ill-conditioned
# solve (~6e-9 for 494_bus after 393 iterations) is sensitive to that rounding (seen: 2.7%).
# ITERATION_SLACK=k (default 0) lets the ranks take up to k more iterations than one process
# and only asks every residual to meet --rtol's default 1e-10: a BoomerAMG hierarchy built
# across ranks is not the one-process hierarchy.
set -euo pipefail
source "$(dirname "$0")/../mpirun_args.sh"
single=$("$tessera" solve "$@" --json)
echo "1 process: $single"
for np in 2 4; do
  multi=$("${mpirun[@]}" -np $np "$tessera" solve "$@" --json)
  echo "$np ranks:   $multi"
  /usr/bin/python3 - "$single" "$multi" "${ITERATION_SLACK:-0}" <<'PY'
import json, sys
a, b, slack = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
assert a["status"] == b["status"] == "converged", (a["status"], b["status"])
if slack == 0:
    assert a["iterations"] == b["iterations"], f"iterations differ: {a['iterations']} vs {b['iterations']}"
    assert abs(a["residual"] - b["residual"]) <= 1e-1 * a["residual"], (a["residual"], b["residual"])
else:
    assert a["iterations"] <= b["iterations"] <= a["iterations"] + slack, (a["iterations"], b["iterations"])
    assert b["residual"] <= 1e-10, b["residual"]
assert a["n"] == b["n"] and a["nnz"] == b["nnz"]
PY
done
echo PASS
