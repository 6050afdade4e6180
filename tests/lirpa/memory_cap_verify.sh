#!/usr/bin/env bash
# Usage: memory_cap_verify.sh TESSERA MPIRUN... -- CAP MODEL PROPERTY
# The memory-cap acceptance of issue 8 for complete verification: under `--memory-cap CAP`
# per process, `tessera verify` in one process fails (exit 5, the cap named), while 2 ranks
# with `--shard fsdp+state` under the same cap per rank decide the property as the uncapped
# single process does (same verdict, method and sub-domain count, `bab.force_synchronous`).
set -uo pipefail
source "$(dirname "$0")/../mpirun_args.sh"
cap=$1; shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'timeout: 300\nbab: {force_synchronous: true}\n' > "$dir/sync.yaml"
"$tessera" verify "$@" --config "$dir/sync.yaml" --quiet --json "$dir/one.json" > /dev/null ||
  { echo "uncapped run failed"; exit 1; }
"$tessera" --memory-cap "$cap" verify "$@" --config "$dir/sync.yaml" --quiet > /dev/null 2> "$dir/err"
rc=$?
grep -o "memory cap of [0-9]* bytes.*requested" "$dir/err" | head -n 1
[ "$rc" -eq 5 ] || { echo "one process under the cap: exit $rc, expected 5"; exit 1; }
"${mpirun[@]}" -np 2 "$tessera" --memory-cap "$cap" verify "$@" --config "$dir/sync.yaml" --quiet \
  --shard fsdp+state --json "$dir/two.json" > /dev/null || { echo "2 ranks under the cap failed"; exit 1; }
echo "1 process, no cap: $(cat "$dir/one.json")"
echo "2 ranks under the cap: $(cat "$dir/two.json")"
/usr/bin/python3 - "$dir" <<'PY'
import json, sys
a, b = (json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ("one", "two"))
for k in ("verdict", "decided_by", "domains_visited"):
    assert a[k] == b[k], f"{k} differs: {a[k]} vs {b[k]}"
assert b["ranks"] == 2 and b["shard"] == "fsdp+state", b
print(f"peak per rank {b['peak_bytes']} vs one process {a['peak_bytes']}")
PY
echo PASS
