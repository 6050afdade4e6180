#!/usr/bin/env bash
# Usage: compare_tp_bounds.sh TESSERA MPIRUN... -- BOUNDS_ARGS...
# Runs `tessera bounds BOUNDS_ARGS --json` in one process and under MPIRUN at 2 ranks with
# `--shard tp`; passes when the bounds agree to 1e-6 relative (TP sums the blocks' partial
# products in another order, so not bitwise) and each rank's baseline is below the single
# process's (each holds its weight blocks only).
set -euo pipefail
tessera=$1; shift
mpirun=()
while [ "$1" != "--" ]; do mpirun+=("$1"); shift; done
shift
export TESSERA_THREADS=1
single=$("$tessera" bounds "$@" --json)
echo "1 process: $single"
multi=$("${mpirun[@]}" -np 2 "$tessera" bounds "$@" --json --shard tp)
echo "2 ranks:   $multi"
/usr/bin/python3 - "$single" "$multi" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
scale = 1 + max(abs(v) for v in a["lower"] + a["upper"])
diff = max(abs(x - y) for k in ("lower", "upper") for x, y in zip(a[k], b[k]))
print(f"largest difference {diff:.3e} (relative {diff / scale:.3e})")
assert len(a["lower"]) == len(b["lower"]) and diff <= 1e-6 * scale, "tp bounds differ from one process"
assert b["shard"] == "tp" and b["ranks"] == 2, b
assert len(b["baseline_bytes"]) == 2 and len(b["peak_bytes"]) == 2, b
assert max(b["baseline_bytes"]) < a["baseline_bytes"][0], "a rank holds as much as one process"
PY
echo PASS
