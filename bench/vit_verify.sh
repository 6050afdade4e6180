#!/usr/bin/env bash
# `tessera verify` on every instance of a VNN-COMP benchmark folder (default the shared
# 2023 ViT), one process, each with its own timeout; verdicts checked against expected.csv.
# Usage: bench/vit_verify.sh TESSERA OUT_DIR [BENCH_DIR] [TIMEOUT_S]
#   TESSERA: the tessera (or tessera-main) binary; several binaries can be compared by
#   running this once per binary under the same load.
# Writes OUT_DIR/<vnnlib stem>.json (tessera's --json), OUT_DIR/<stem>.log (the progress
# lines, with phase timestamps) and prints one JSON summary: per instance the verdict,
# expected answer, seconds, domains visited and the stage that decided it; decided and
# wrong counts; the load average at start and end.
set -euo pipefail
tessera=$1 out=$2
dir=${3:-$(dirname "$0")/../../shared/data/vnncomp2023/vit}
timeout=${4:-100}
mkdir -p "$out"
export GLOG_minloglevel=2 OMP_WAIT_POLICY=passive
load_start=$(cut -d' ' -f1 /proc/loadavg)
tail -n +2 "$dir/expected.csv" | while IFS=, read -r onnx vnnlib expected; do
  stem=${vnnlib%.vnnlib}
  "$tessera" verify "$dir/$onnx" "$dir/$vnnlib" --timeout "$timeout" --json "$out/$stem.json" \
    > /dev/null 2> "$out/$stem.log" || true
  echo "$stem,$expected"
done > "$out/expected.txt"
/usr/bin/python3 - "$out" "$load_start" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import json, sys
out, load_start, load_end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
rows, decided, wrong = [], 0, 0
for line in open(f"{out}/expected.txt"):
    stem, expected = line.strip().split(",")
    try:
        r = json.load(open(f"{out}/{stem}.json"))
    except (OSError, ValueError):
        r = {"verdict": "error"}
    v = r.get("verdict")
    ok = v in ("sat", "unsat")
    decided += ok
    wrong += ok and v != expected
    rows.append({"instance": stem, "verdict": v, "expected": expected, "seconds": r.get("seconds"),
                 "domains": r.get("domains_visited"), "decided_by": r.get("decided_by")})
print(json.dumps({"decided": decided, "wrong": wrong, "instances": len(rows), "load_start": load_start,
                  "load_end": load_end, "runs": rows}, indent=1))
PY
