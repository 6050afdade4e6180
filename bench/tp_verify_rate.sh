#!/usr/bin/env bash
# Usage: [T=build/tessera] [TIMEOUT=60] [OUT=dir] bench/tp_verify_rate.sh < INSTANCES
# (INSTANCES: lines "MODEL.onnx PROPERTY.vnnlib")
# `tessera verify` in one process and `--shard tp` under mpirun at 2 ranks, both with
# bab.force_synchronous and one thread per rank; one line per instance: verdicts, methods,
# domains, seconds (from the JSON, counted from the process start) and domains per second.
set -u
T=${T:-build/tessera}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GLOG_minloglevel=2 OMP_WAIT_POLICY=passive
out=${OUT:-/tmp/tpm}; mkdir -p $out
timeout_s=${TIMEOUT:-60}
printf "timeout: $timeout_s\nbab: {force_synchronous: true}\n" > $out/sync.yaml
while read -r net prop; do
  name=$(basename $net .onnx)__$(basename $prop .vnnlib)
  load=$(cut -d' ' -f1 /proc/loadavg)
  $T --threads 1 verify $net $prop --config $out/sync.yaml --quiet --json $out/$name.one.json > /dev/null < /dev/null
  mpirun --oversubscribe --bind-to none -np 2 $T --threads 1 verify $net $prop --config $out/sync.yaml --quiet --shard tp --json $out/$name.tp.json > /dev/null < /dev/null
  /usr/bin/python3 - $out/$name.one.json $out/$name.tp.json "$name" "$load" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
ra = a["domains_visited"] / max(a["seconds"], 1e-9); rb = b["domains_visited"] / max(b["seconds"], 1e-9)
print(f'{sys.argv[3]:55s} one: {a["verdict"]:7s} {a["decided_by"]:12s} {a["domains_visited"]:7d} {a["seconds"]:7.2f}s {ra:9.1f}/s | tp2: {b["verdict"]:7s} {b["decided_by"]:12s} {b["domains_visited"]:7d} {b["seconds"]:7.2f}s {rb:9.1f}/s | ratio {ra/max(rb,1e-9):5.2f} load {sys.argv[4]}')
PY
done
