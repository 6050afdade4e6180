#!/usr/bin/env bash
# Usage: compare_sharded_bounds.sh fsdp|fsdp+state|tp TESSERA MPIRUN... -- BOUNDS_ARGS...
# Runs `tessera bounds BOUNDS_ARGS --json` in one process and under MPIRUN at 2 ranks with
# `--shard MODE`; passes when the bounds are those of one process (fsdp: exactly, since it
# only moves weights; fsdp+state: exactly for ibp and crown, whose rows are computed as in
# one process, to 1e-6 relative for alpha-crown, whose slope gradients are summed over
# ranks in another order; tp: to 1e-6 relative, since it sums the blocks' partial products
# in another order) and each rank's baseline is below the single process's.
set -euo pipefail
mode=$1; shift
source "$(dirname "$0")/../mpirun_args.sh"
single=$("$tessera" bounds "$@" --json)
echo "1 process: $single"
multi=$("${mpirun[@]}" -np 2 "$tessera" bounds "$@" --json --shard "$mode")
echo "2 ranks:   $multi"
/usr/bin/python3 - "$mode" "$single" "$multi" "$*" <<'PY'
import json, sys
mode, a, b, args = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
assert len(a["lower"]) == len(b["lower"]) == len(b["upper"]), "different numbers of bounds"
if mode == "fsdp" or (mode == "fsdp+state" and "alpha-crown" not in args):
    assert a["lower"] == b["lower"], f"lower bounds differ:\n{a['lower']}\n{b['lower']}"
    assert a["upper"] == b["upper"], f"upper bounds differ:\n{a['upper']}\n{b['upper']}"
else:
    scale = 1 + max(abs(v) for v in a["lower"] + a["upper"])
    diff = max(abs(x - y) for k in ("lower", "upper") for x, y in zip(a[k], b[k]))
    print(f"largest difference {diff:.3e} (relative {diff / scale:.3e})")
    assert diff <= 1e-6 * scale, f"{mode} bounds differ from one process"
assert b["shard"] == mode and b["ranks"] == 2, b
assert len(b["baseline_bytes"]) == 2 and len(b["peak_bytes"]) == 2, b
assert max(b["baseline_bytes"]) < a["baseline_bytes"][0], "a rank holds as much as one process"
PY
echo PASS
