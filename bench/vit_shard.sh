#!/usr/bin/env bash
# Sharded bounds on a ViT: `tessera bounds --shard MODE` under mpirun against one process.
# Usage: bench/vit_shard.sh TESSERA OUT_DIR (ONNX VNNLIB | -- [vit_instance.py options])
#   With `--` the ViT is generated into OUT_DIR by bench/vit_instance.py (e.g. `-- --image 4
#   --patch 4 --dim 1024 --heads 4 --depth 4 --mlp 1024 --seed 1`), never kept in the repo.
# Env: METHODS (default "ibp crown alpha-crown"), RUNS (ranks:mode, default "1:none 2:fsdp
#   4:fsdp 2:fsdp+state 4:fsdp+state"; tp-heads too), SPEC (e.g. --spec), THREADS (per process, default 1:
#   the one-process run must use the ranks' thread count, or matrix products sum in another
#   order and the last bits differ), MPIRUN (default "mpirun --oversubscribe --bind-to none").
# Appends one line per run to OUT_DIR/results.txt: ranks, mode, method, wall seconds, max RSS
# of one process (KB; under mpirun the rank that wrote it last), whether the bounds are bitwise those of the one-process run of
# the same method (else their largest difference relative to 1 + the largest bound: tp-heads sums
# in another order), and tessera's JSON (per-rank baseline_bytes and peak_bytes).
set -euo pipefail
tessera=$1 out=$2
shift 2
mkdir -p "$out"
if [ "${1:-}" = "--" ]; then
  shift
  mapfile -t paths < <(/usr/bin/python3 "$(dirname "$0")/vit_instance.py" "$out" "$@" 2>/dev/null)
  onnx=${paths[0]} vnnlib=${paths[1]}
  echo "generated $onnx (${paths[2]})"
else
  onnx=$1 vnnlib=$2
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GLOG_minloglevel=2 OMP_WAIT_POLICY=passive
read -r -a mpirun <<< "${MPIRUN:-mpirun --oversubscribe --bind-to none}"
for method in ${METHODS:-ibp crown alpha-crown}; do
  reference=""
  for run in ${RUNS:-1:none 2:fsdp 4:fsdp 2:fsdp+state 4:fsdp+state}; do
    ranks=${run%%:*} mode=${run#*:}
    start=$(date +%s.%N)
    if [ "$ranks" = 1 ] && [ "$mode" = none ]; then
      json=$(/usr/bin/time -f "%M" -o "$out/rss" "$tessera" --threads "${THREADS:-1}" bounds "$onnx" "$vnnlib" ${SPEC:-} --json \
               --method "$method")
      reference=$json
    else
      json=$("${mpirun[@]}" -np "$ranks" /usr/bin/time -f "%M" -o "$out/rss" "$tessera" --threads "${THREADS:-1}" \
               bounds "$onnx" "$vnnlib" ${SPEC:-} --json --method "$method" --shard "$mode")
    fi
    wall=$(echo "$(date +%s.%N) - $start" | bc)
    same=$(/usr/bin/python3 -c 'import json,sys
a, b = sys.argv[1], sys.argv[2]
if not a: print("no-reference"); sys.exit()
a, b = json.loads(a), json.loads(b)
if (a["lower"], a["upper"]) == (b["lower"], b["upper"]): print("bitwise"); sys.exit()
ref = a["lower"] + a["upper"]
scale = 1 + max(abs(v) for v in ref)
print("max-rel-diff=%.3g" % (max(abs(u - v) for u, v in zip(ref, b["lower"] + b["upper"])) / scale))' "$reference" "$json")
    line="$ranks $mode $method wall=${wall}s rss=$(tail -1 "$out/rss")KB $same $json"
    echo "$line" | tee -a "$out/results.txt"
  done
done
