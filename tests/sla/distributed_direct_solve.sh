#!/usr/bin/env bash
# Usage: distributed_direct_solve.sh TESSERA MPIRUN... -- SOLVE_ARGS...
# Runs `tessera solve SOLVE_ARGS --json` (a distributed direct backend, e.g. --backend mumps)
# on 1, 2 and 4 ranks; passes when every run converges with backend BACKEND (default mumps),
# no iterations, the same n and nnz, and a relative residual of at most 1e-10. RANKS (default
# "1 2 4") names the rank counts.
set -euo pipefail
source "$(dirname "$0")/../mpirun_args.sh"
first=""
for np in ${RANKS:-1 2 4}; do
  run=$("${mpirun[@]}" -np $np "$tessera" solve "$@" --json)
  echo "$np ranks: $run"
  /usr/bin/python3 - "$run" "${first:-$run}" "${BACKEND:-mumps}" <<'PY'
import json, sys
a, ref = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert a["status"] == "converged", a["status"]
assert a["backend"] == sys.argv[3] and a["iterations"] == 0, (a["backend"], a["iterations"])
assert a["residual"] <= 1e-10, a["residual"]
assert a["n"] == ref["n"] and a["nnz"] == ref["nnz"]
PY
  first=${first:-$run}
done
echo PASS
