#!/usr/bin/env bash
# Usage: compare_distributed_spectral.sh TESSERA MPIRUN... -- COMMAND ARGS...
# Runs `tessera COMMAND ARGS --json` (COMMAND: eigsh or logdet) single-process and under
# MPIRUN at 2 and 4 ranks; passes when every run converges and the eigenvalues (eigsh) or
# sign and log|det| (logdet) agree with one process's to 1e-10 relative.
set -euo pipefail
source "$(dirname "$0")/../mpirun_args.sh"
single=$("$tessera" "$@" --json)
echo "1 process: $single"
for np in 2 4; do
  multi=$("${mpirun[@]}" -np $np "$tessera" "$@" --json)
  echo "$np ranks:   $multi"
  /usr/bin/python3 - "$single" "$multi" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert a["status"] == b["status"] == "converged", (a["status"], b["status"])
assert a["n"] == b["n"]
if "eigenvalues" in a:
    scale = max(abs(v) for v in a["eigenvalues"])
    assert all(abs(x - y) <= 1e-10 * scale for x, y in zip(a["eigenvalues"], b["eigenvalues"])), (a, b)
else:
    assert a["sign"] == b["sign"], (a["sign"], b["sign"])
    assert abs(a["logabsdet"] - b["logabsdet"]) <= 1e-10 * max(1.0, abs(a["logabsdet"])), (a, b)
PY
done
echo PASS
