#!/usr/bin/env bash
# CROWN of two or more builds in turn, one thread: sri_resnet_a (VNN-COMP 2022, prop 4711) and
# oval21's cifar_wide_kw, `tessera bounds --method crown --json` through each build's launcher.
# One JSON line per run (build, job, round, load, time, and the command's own JSON: seconds,
# peak bytes, bounds) on standard output; the builds alternate within each round.
#
#   bench/crown_ab.sh ROUNDS BUILD_DIR...
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DATA="${TESSERA_SHARED_DATA:-$ROOT/../shared/data}"
[ "$#" -ge 2 ] || { echo "usage: bench/crown_ab.sh ROUNDS BUILD_DIR..." >&2; exit 2; }
rounds=$1; shift
R="$DATA/vnncomp2022/sri_resnet_a"; O="$DATA/vnncomp2021/oval21"
declare -A ARGS=(
  [sri_resnet_a]="$R/resnet_3b2_bn_mixup_adv_4.0_bs128_lr-1.onnx $R/cifar10_spec_idx_4711_eps_0.00350.vnnlib"
  [oval21]="$O/cifar_wide_kw.onnx $O/cifar_wide_kw-img19-eps0.007973856209150327.vnnlib"
)
for i in $(seq 1 "$rounds"); do
  for build in "$@"; do
    for job in sri_resnet_a oval21; do
      # shellcheck disable=SC2086
      out=$(GLOG_minloglevel=2 "$build/tessera" --threads 1 bounds ${ARGS[$job]} --method crown --json 2>/dev/null)
      echo "{\"build\":\"$build\",\"job\":\"$job\",\"round\":$i,\"load\":\"$(cut -d' ' -f1 /proc/loadavg)\",\"date\":\"$(date -u +%FT%TZ)\",\"out\":$out}"
    done
  done
done
