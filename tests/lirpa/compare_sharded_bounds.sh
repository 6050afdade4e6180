#!/usr/bin/env bash
# Usage: compare_sharded_bounds.sh TESSERA MPIRUN... -- BOUNDS_ARGS...
# Runs `tessera bounds BOUNDS_ARGS --json` in one process and under MPIRUN at 2 ranks with
# `--shard fsdp`; passes when the bounds are exactly equal (FSDP only moves weights, the
# arithmetic is unchanged) and each rank's baseline is below the single process's. One
# thread everywhere, so that the single run does not split reductions differently.
set -euo pipefail
tessera=$1; shift
mpirun=()
while [ "$1" != "--" ]; do mpirun+=("$1"); shift; done
shift
export TESSERA_THREADS=1
single=$("$tessera" bounds "$@" --json)
echo "1 process: $single"
multi=$("${mpirun[@]}" -np 2 "$tessera" bounds "$@" --json --shard fsdp)
echo "2 ranks:   $multi"
/usr/bin/python3 - "$single" "$multi" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert a["lower"] == b["lower"], f"lower bounds differ:\n{a['lower']}\n{b['lower']}"
assert a["upper"] == b["upper"], f"upper bounds differ:\n{a['upper']}\n{b['upper']}"
assert b["shard"] == "fsdp" and b["ranks"] == 2, b
assert len(b["baseline_bytes"]) == 2 and len(b["peak_bytes"]) == 2, b
assert max(b["baseline_bytes"]) < a["baseline_bytes"][0], "a rank holds as much as one process"
PY
echo PASS
