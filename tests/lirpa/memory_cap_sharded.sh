#!/usr/bin/env bash
# Usage: memory_cap_sharded.sh MODE TESSERA MPIRUN... -- CAP BENCH_SHARD_ARGS...
# The memory-cap acceptance of issue 8 at small scale: under `--memory-cap CAP` per process,
# one process bounding the whole MLP fails (exit 5, the cap named), while 2 ranks sharded by
# MODE (tp, fsdp+state) under the same cap per rank succeed with the bounds of the uncapped
# single process (to 1e-6 relative).
set -uo pipefail
mode=$1; shift
source "$(dirname "$0")/../mpirun_args.sh"
cap=$1; shift
err=$(mktemp)
trap 'rm -f "$err"' EXIT
reference=$("$tessera" bench shard "$@" --modes none --no-reference) || { echo "uncapped run failed"; exit 1; }
"$tessera" --memory-cap "$cap" bench shard "$@" --modes none --no-reference > /dev/null 2> "$err"
rc=$?
grep -o "memory cap of [0-9]* bytes.*requested" "$err" | head -n 1
[ "$rc" -eq 5 ] || { echo "one process under the cap: exit $rc, expected 5"; exit 1; }
sharded=$("${mpirun[@]}" -np 2 "$tessera" --memory-cap "$cap" bench shard "$@" --modes "$mode" --no-reference) ||
  { echo "2 ranks with $mode under the cap failed"; exit 1; }
echo "1 process: $reference"
echo "2 ranks:   $sharded"
/usr/bin/python3 - "$reference" "$sharded" "$mode" <<'PY'
import json, sys
a, b, mode = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
scale = 1 + max(abs(v) for v in a["lower"] + a["upper"])
diff = max(abs(x - y) for k in ("lower", "upper") for x, y in zip(a[k], b[k]))
assert len(a["lower"]) == len(b["lower"]) and diff <= 1e-6 * scale, f"bounds differ by {diff}"
assert b["ranks"] == 2 and b["shard"] == mode, b
print(f"peak per rank {b['peak_bytes']} vs one process {a['peak_bytes']}, largest difference {diff:.3e}")
PY
echo PASS
