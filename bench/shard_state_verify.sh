#!/usr/bin/env bash
# Usage: [MODES="none fsdp"] [CONFIG=FILE.yaml] bench/shard_state_verify.sh TESSERA NET PROP [P...]
# (default P: 1 2 4; MODES: none fsdp fsdp+state; CONFIG: {timeout: 300, bab: {force_synchronous: true}})
# `tessera verify` under mpirun at each P with each --shard mode (one thread per rank); one
# JSON line per run (the verdict, domains, seconds, per-rank baseline and peak bytes) with the
# load average before the run.
set -euo pipefail
tessera=$1 net=$2 prop=$3; shift 3
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(1 2 4)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'timeout: 300\nbab: {force_synchronous: true}\n' > "$dir/sync.yaml"
[ -z "${CONFIG:-}" ] || cp "$CONFIG" "$dir/sync.yaml"
read -r -a modes <<< "${MODES:-none fsdp fsdp+state}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GLOG_minloglevel=2
for p in "${ranks[@]}"; do
  for shard in "${modes[@]}"; do
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    mpirun --oversubscribe --bind-to none -np "$p" "$tessera" --threads 1 verify "$net" "$prop" \
      --config "$dir/sync.yaml" --quiet --shard "$shard" --json "$dir/out.json" > /dev/null
    /usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j["load"]=sys.argv[2]; print(json.dumps(j))' \
      "$dir/out.json" "$load"
  done
done
