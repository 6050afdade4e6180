#!/usr/bin/env bash
# Usage: compare_sharded_verify.sh [fsdp|fsdp+state|tp] TESSERA MPIRUN... -- MODEL PROPERTY [VERIFY_ARGS...]
# Runs `tessera verify` with `bab.force_synchronous` in one process and under MPIRUN at 2
# ranks with `--shard MODE` (default fsdp); passes when the verdict, the method that decided it and the
# number of sub-domains are the same, and each rank's baseline is below the single
# process's. With tp (the same search, but its products sum in another order, so a bound may
# differ in its last bits and the search take another path) the verdict and the method must
# be the same. One thread everywhere.
set -euo pipefail
mode=fsdp
case "$1" in fsdp|fsdp+state|tp) mode=$1; shift ;; esac
source "$(dirname "$0")/../mpirun_args.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'timeout: 300\nbab: {force_synchronous: true}\n' > "$dir/sync.yaml"
"$tessera" verify "$@" --config "$dir/sync.yaml" --quiet --json "$dir/one.json" > "$dir/one.out"
"${mpirun[@]}" -np 2 "$tessera" verify "$@" --config "$dir/sync.yaml" --quiet --shard "$mode" \
  --json "$dir/two.json" > "$dir/two.out"
echo "1 process: $(cat "$dir/one.json")"
echo "2 ranks:   $(cat "$dir/two.json")"
/usr/bin/python3 - "$dir" "$mode" <<'PY'
import json, sys
d, mode = sys.argv[1], sys.argv[2]
a, b = (json.load(open(f"{d}/{n}.json")) for n in ("one", "two"))
last = lambda n: open(f"{d}/{n}.out").read().split()[-1]
for k in ("verdict", "decided_by") if mode == "tp" else ("verdict", "decided_by", "domains_visited"):
    assert a[k] == b[k], f"{k} differs: {a[k]} vs {b[k]}"
assert last("one") == last("two") == a["verdict"], "the last line of stdout is not the verdict"
assert b["shard"] == mode and b["ranks"] == 2 and len(b["baseline_bytes"]) == 2, b
assert max(b["baseline_bytes"]) < a["baseline_bytes"][0], "a rank holds as much as one process"
if mode == "fsdp+state":  # the batch working set is split too: the peak must fall
    assert max(b["peak_bytes"]) < a["peak_bytes"][0], "a rank peaks as high as one process"
print("verdict", a["verdict"], "by", a["decided_by"], "domains", a["domains_visited"], "| 2 ranks:", b["decided_by"],
      b["domains_visited"], "domains")
PY
echo PASS
