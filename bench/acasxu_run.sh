#!/bin/bash
# Runs `tessera verify` on VNN-COMP instances and compares with the expected verdicts.
#
#   bench/acasxu_run.sh [--benchmark acasxu|mnistfc|DIR] [--cap SECONDS] [--only REGEX] [--out FILE.csv] [--server]
#
# A benchmark is a folder of ../shared/data/vnncomp2021 (acasxu, mnistfc, oval21) or a path
# under ../shared/data (vnncomp2022/sri_resnet_a, vnncomp2022/mnist_fc). Its instances come
# from <benchmark>_instances.csv or instances.csv (onnx, vnnlib, timeout), else from
# expected.csv with 300 s each. Each instance gets min(its timeout, cap) seconds. Writes a
# CSV (onnx, vnnlib, timeout, verdict, expected, seconds, check) and prints a summary; the
# exit code is 1 when any verdict contradicts expected.csv. Each instance's standard error
# (progress lines, the final reason) goes to <out>_logs/<onnx>__<vnnlib>.log next to the CSV.
# With --server, one `tessera serve` is started first (its start-up timed and reported as
# server_start_seconds) and every instance runs through the launcher on it (TESSERA_SERVER):
# an instance's seconds are still the whole `tessera verify` command, launcher included.
# Env: TESSERA_BIN, THREADS (1), VERIFY_ARGS (more `verify` options, e.g. "--config C.yaml").
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${TESSERA_BIN:-$ROOT/build/tessera}"
BENCH=acasxu; CAP=0; ONLY="."; OUT=""; SERVER=0
while [ "$#" -gt 0 ]; do
  case "$1" in
    --benchmark) BENCH="$2"; shift 2 ;;
    --cap) CAP="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --server) SERVER=1; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$BENCH" in
  */*) DATA="$ROOT/../shared/data/$BENCH" ;;
  *) DATA="$ROOT/../shared/data/vnncomp2021/$BENCH" ;;
esac
NAME="$(basename "$BENCH")"
INSTANCES="$DATA/${NAME}_instances.csv"
[ -f "$INSTANCES" ] || INSTANCES="$DATA/instances.csv"
if [ ! -f "$INSTANCES" ]; then  # expected.csv (header onnx,vnnlib,expected): 300 s each
  INSTANCES="$(mktemp)"
  tail -n +2 "$DATA/expected.csv" | awk -F, 'NF >= 3 { print $1 "," $2 ",300" }' > "$INSTANCES"
fi
OUT="${OUT:-$ROOT/bench/${NAME}_results.csv}"
LOGS="${OUT%.csv}_logs"
mkdir -p "$LOGS"
export GLOG_minloglevel=2
echo "onnx,vnnlib,timeout,verdict,expected,seconds,check" > "$OUT"
server_start=0
if [ "$SERVER" = 1 ]; then
  SERVE_DIR="$(mktemp -d)"
  start=$(date +%s.%N)
  "$BIN" serve --socket "$SERVE_DIR/s" 2>"$LOGS/server.log" &
  SERVE_PID=$!
  trap 'kill $SERVE_PID 2>/dev/null; rm -rf "$SERVE_DIR"' EXIT
  for _ in $(seq 1 600); do [ -S "$SERVE_DIR/s" ] && [ -S "$SERVE_DIR/s.passive" ] && break; sleep 0.01; done
  [ -S "$SERVE_DIR/s" ] || { echo "tessera serve did not start (see $LOGS/server.log)" >&2; exit 2; }
  server_start=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
  export TESSERA_SERVER="$SERVE_DIR/s"
fi
echo "# $(date -u +%FT%TZ) $(uptime)" >&2
total=0; wrong=0; decided=0; count=0; t_all=0
while IFS=, read -r onnx vnnlib timeout; do
  timeout="${timeout//[$'\r ']/}"
  [[ "$onnx,$vnnlib" =~ $ONLY ]] || continue
  t="$timeout"
  if [ "$CAP" != "0" ]; then t="$(awk -v a="$timeout" -v b="$CAP" 'BEGIN { print (a < b) ? a : b }')"; fi
  expected="$(grep -F "$onnx,$vnnlib," "$DATA/expected.csv" | head -n 1 | cut -d, -f3 | tr -d '\r ')"
  start=$(date +%s.%N)
  log="$LOGS/${onnx%.onnx}__${vnnlib%.vnnlib}.log"
  verdict="$("$BIN" --threads "${THREADS:-1}" verify "$DATA/$onnx" "$DATA/$vnnlib" --timeout "$t" ${VERIFY_ARGS:-} 2>"$log" | tail -n 1)"
  [ -n "$verdict" ] || verdict=error
  secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
  check=undecided
  if [ "$verdict" = "sat" ] || [ "$verdict" = "unsat" ]; then
    decided=$((decided + 1))
    if [ "$verdict" = "$expected" ]; then check=ok; else check=WRONG; wrong=$((wrong + 1)); fi
  fi
  count=$((count + 1))
  t_all=$(awk -v a="$t_all" -v b="$secs" 'BEGIN { printf "%.2f", a + b }')
  echo "$onnx,$vnnlib,$t,$verdict,$expected,$secs,$check" >> "$OUT"
  printf '%-40s %-14s %-8s %-8s %8s s  %s\n' "$onnx" "$vnnlib" "$verdict" "$expected" "$secs" "$check" >&2
done < "$INSTANCES"
echo "{\"benchmark\":\"$BENCH\",\"instances\":$count,\"decided\":$decided,\"wrong\":$wrong,\"total_seconds\":$t_all,\"server_start_seconds\":$server_start,\"cap\":$CAP,\"csv\":\"$OUT\",\"logs\":\"$LOGS\"}"
echo "# $(date -u +%FT%TZ) $(uptime)" >&2
[ "$wrong" -eq 0 ]
