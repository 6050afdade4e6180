#!/usr/bin/env bash
# Speed on a busy machine (issue #27): ACAS Xu 1_1 prop_4 (`tessera verify`) and a 1M-DOF
# CG solve (`tessera solve --poisson2d 1000`; on request also alpha-CROWN on the CIFAR ResNet
# sri_resnet_a, job alpha_crown_sri_resnet_a), with default threads, on the machine as it is
# ("idle") and beside one extra busy process ("busy"). The two are alternated run by run
# (idle, busy, idle, busy, ...), so that other work on a shared machine falls on both alike.
# One JSON line a run (wall seconds, the load before it), then one a case (median of its
# runs) and one a job (busy median / idle median), on standard output.
#
#   bench/busy_machine.sh [--repeats N] [--spins "default 300000 0"] [--threads "default 1 2"]
#                         [--loads "idle busy"] [--jobs "acasxu_1_1_prop_4 cg_poisson2d_1M"] [--build DIR]
#
# Spins: "default" is what tessera chooses (passive when busy at start, omp_wait.h); a number
# sets GOMP_SPINCOUNT; 300000 is libgomp's own default; 0 equals OMP_WAIT_POLICY=passive.
# Threads: "default" is what tessera chooses (every core, or the free ones when some but not
# all are taken at start; TESSERA_THREADS is unset here); a number is `--threads N`.
# Each spin x threads setting runs idle then busy, in the order given, every repeat.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$ROOT/build"; REPEATS=3; SPINS="default"; THREADS="default"; LOADS="idle busy"; JOBLIST="acasxu_1_1_prop_4 cg_poisson2d_1M"
while [ "$#" -gt 0 ]; do
  case "$1" in
    --repeats) REPEATS="$2"; shift 2 ;;
    --spins) SPINS="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --loads) LOADS="$2"; shift 2 ;;
    --jobs) JOBLIST="$2"; shift 2 ;;
    --build) BUILD="$2"; shift 2 ;;
    *) echo "busy_machine.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
export GLOG_minloglevel=2
unset OMP_WAIT_POLICY GOMP_SPINCOUNT TESSERA_THREADS
ACAS="${TESSERA_SHARED_DATA:-$ROOT/../shared/data}/vnncomp2021/acasxu"
SRI="${TESSERA_SHARED_DATA:-$ROOT/../shared/data}/vnncomp2022/sri_resnet_a"
declare -A JOBS=(
  [acasxu_1_1_prop_4]="verify $ACAS/ACASXU_run2a_1_1_batch_2000.onnx $ACAS/prop_4.vnnlib --timeout 116 --quiet"
  [cg_poisson2d_1M]="solve --poisson2d 1000 --backend native --method cg --rtol 1e-8 --json"
  [alpha_crown_sri_resnet_a]="bounds $SRI/resnet_3b2_bn_mixup_adv_4.0_bs128_lr-1.onnx $SRI/cifar10_spec_idx_4711_eps_0.00350.vnnlib --method alpha-crown --iterations 5"
)
busy_pid=""
start_busy() { (while :; do :; done) & busy_pid=$!; sleep 1; }
stop_busy() { [ -n "$busy_pid" ] && kill "$busy_pid" 2>/dev/null; wait "$busy_pid" 2>/dev/null || true; busy_pid=""; }
trap stop_busy EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

declare -A TIMES=()
for rep in $(seq "$REPEATS"); do
  for job in $JOBLIST; do
    for spin in $SPINS; do
      for th in $THREADS; do
        for load in $LOADS; do
          [ "$load" = busy ] && start_busy
          loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
          targs=""; [ "$th" = default ] || targs="--threads $th"
          cmd="$BUILD/tessera $targs ${JOBS[$job]}"
          t0=$(date +%s.%N); rc=0
          if [ "$spin" = default ]; then $cmd >/dev/null 2>&1 || rc=$?
          else GOMP_SPINCOUNT=$spin $cmd >/dev/null 2>&1 || rc=$?; fi
          t1=$(date +%s.%N)
          stop_busy
          t=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')
          TIMES[$job/$spin/$th/$load]="${TIMES[$job/$spin/$th/$load]:-} $t"
          printf '{"job":"%s","load":"%s","spin":"%s","threads":"%s","run":%d,"wall_s":%s,"exit":%d,"loadavg_before":"%s","date":"%s"}\n' \
            "$job" "$load" "$spin" "$th" "$rep" "$t" "$rc" "$loadavg" "$(date -u +%FT%TZ)"
        done
      done
    done
  done
done
for job in $JOBLIST; do
  for spin in $SPINS; do
    for th in $THREADS; do
      for load in $LOADS; do
        med=$(echo ${TIMES[$job/$spin/$th/$load]} | tr ' ' '\n' | median)
        printf '{"job":"%s","load":"%s","spin":"%s","threads":"%s","median_s":%.3f,"runs_s":[%s]}\n' \
          "$job" "$load" "$spin" "$th" "$med" "$(echo ${TIMES[$job/$spin/$th/$load]} | sed 's/ /,/g')"
      done
      if [ -n "${TIMES[$job/$spin/$th/idle]:-}" ] && [ -n "${TIMES[$job/$spin/$th/busy]:-}" ]; then
        i=$(echo ${TIMES[$job/$spin/$th/idle]} | tr ' ' '\n' | median); b=$(echo ${TIMES[$job/$spin/$th/busy]} | tr ' ' '\n' | median)
        printf '{"job":"%s","spin":"%s","threads":"%s","busy_over_idle":%.3f}\n' "$job" "$spin" "$th" \
          "$(awk -v i="$i" -v b="$b" 'BEGIN {print b / i}')"
      fi
    done
  done
done
