#!/usr/bin/env bash
# Speed on a busy machine (issue #27): ACAS Xu 1_1 prop_4 (`tessera verify`) and a 1M-DOF
# CG solve (`tessera solve --poisson2d 1000`), with default threads, on an idle machine and
# beside one busy process, for several libgomp spin settings. One JSON line a case
# (median wall seconds of REPEATS runs, the load before it) on standard output.
#
#   bench/busy_machine.sh [--repeats N] [--spins "default 300000 0"] [--loads "idle busy"] [--build DIR]
#
# "default" is what tessera chooses (passive when busy at start, omp_wait.h); a number
# sets GOMP_SPINCOUNT; 300000 is libgomp's own default; 0 equals OMP_WAIT_POLICY=passive.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$ROOT/build"; REPEATS=3; SPINS="default 300000 0"; LOADS="idle busy"
while [ "$#" -gt 0 ]; do
  case "$1" in
    --repeats) REPEATS="$2"; shift 2 ;;
    --spins) SPINS="$2"; shift 2 ;;
    --loads) LOADS="$2"; shift 2 ;;
    --build) BUILD="$2"; shift 2 ;;
    *) echo "busy_machine.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
export GLOG_minloglevel=2
unset OMP_WAIT_POLICY GOMP_SPINCOUNT TESSERA_THREADS
ACAS="$ROOT/../shared/data/vnncomp2021/acasxu"
declare -A JOBS=(
  [acasxu_1_1_prop_4]="$BUILD/tessera verify $ACAS/ACASXU_run2a_1_1_batch_2000.onnx $ACAS/prop_4.vnnlib --timeout 116 --quiet"
  [cg_poisson2d_1M]="$BUILD/tessera solve --poisson2d 1000 --backend native --method cg --rtol 1e-8 --json"
)
busy_pid=""
start_busy() { (while :; do :; done) & busy_pid=$!; sleep 1; }
stop_busy() { [ -n "$busy_pid" ] && kill "$busy_pid" 2>/dev/null; wait "$busy_pid" 2>/dev/null || true; busy_pid=""; }
trap stop_busy EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

for load in $LOADS; do
  [ "$load" = busy ] && start_busy
  for job in "${!JOBS[@]}"; do
    for spin in $SPINS; do
      loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
      times=""
      for _ in $(seq "$REPEATS"); do
        t0=$(date +%s.%N)
        if [ "$spin" = default ]; then ${JOBS[$job]} >/dev/null 2>&1
        else GOMP_SPINCOUNT=$spin ${JOBS[$job]} >/dev/null 2>&1; fi
        t1=$(date +%s.%N)
        times="$times $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')"
      done
      med=$(echo $times | tr ' ' '\n' | median)
      printf '{"job":"%s","load":"%s","spin":"%s","median_s":%.3f,"runs_s":[%s],"loadavg_before":"%s","date":"%s"}\n' \
        "$job" "$load" "$spin" "$med" "$(echo $times | sed 's/ /,/g')" "$loadavg" "$(date -u +%FT%TZ)"
    done
  done
  stop_busy
done
