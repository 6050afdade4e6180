#!/usr/bin/env bash
# Graph branch and bound, two builds side by side: every instance of a CSV (onnx,vnnlib) is
# verified by both binaries at the same time, one thread each (so both see the same load),
# with the same timeout. One JSON line per instance and binary (verdict, domains, seconds).
#
#   bench/graph_bab_ab.sh OLD_BINARY NEW_BINARY INSTANCES.csv [TIMEOUT]
#
# The binaries are `tessera-main` builds (e.g. a copy of build/tessera-main from the main
# a change starts from, and the change's). Instances: bench/graph_bab_instances.py.
set -uo pipefail
old="$1"; new="$2"; csv="$3"; timeout="${4:-60}"
export GLOG_minloglevel=2 OMP_WAIT_POLICY=passive
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
while IFS=, read -r onnx vnnlib; do
  name=$(basename "$onnx" .onnx)
  load=$(cut -d' ' -f1 /proc/loadavg)
  rm -f "$tmp/old.json" "$tmp/new.json"
  "$old" --threads 1 verify "$onnx" "$vnnlib" --timeout "$timeout" --quiet --json "$tmp/old.json" >/dev/null 2>&1 &
  p_old=$!
  "$new" --threads 1 verify "$onnx" "$vnnlib" --timeout "$timeout" --quiet --json "$tmp/new.json" >/dev/null 2>&1 &
  p_new=$!
  wait "$p_old" || true
  wait "$p_new" || true
  for side in old new; do
    [ -s "$tmp/$side.json" ] || { echo "{\"instance\":\"$name\",\"build\":\"$side\",\"verdict\":\"no result (exit without JSON)\"}"; continue; }
    /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps({"instance":sys.argv[2],"build":sys.argv[3],"verdict":r["verdict"],"domains":r["domains_visited"],"seconds":round(r["seconds"],3),"loadavg_before":float(sys.argv[4])}))' \
      "$tmp/$side.json" "$name" "$side" "$load"
  done
done < "$csv"
