#!/usr/bin/env bash
# `tessera verify` of two or more builds in turn, instance by instance (builds alternate within
# each instance, so a change of the machine's speed falls on all), default threads, through each
# build's launcher. One JSON line per run: round, instance, build, verdict, process wall seconds.
#
#   bench/verify_in_turn.sh ROUNDS TIMEOUT INSTANCES BUILD_DIR...
#
# INSTANCES: a file of lines "MODEL.onnx PROPERTY.vnnlib".
set -uo pipefail
[ "$#" -ge 4 ] || { echo "usage: bench/verify_in_turn.sh ROUNDS TIMEOUT INSTANCES BUILD_DIR..." >&2; exit 2; }
rounds=$1; timeout=$2; instances=$3; shift 3
export GLOG_minloglevel=2
for r in $(seq 1 "$rounds"); do
  while read -r net prop; do
    for build in "$@"; do
      t0=$(date +%s.%N)
      verdict=$("$build/tessera" verify "$net" "$prop" --timeout "$timeout" --quiet 2>/dev/null < /dev/null | tail -n 1)
      t1=$(date +%s.%N)
      echo "{\"round\":$r,\"onnx\":\"$(basename "$net")\",\"vnnlib\":\"$(basename "$prop")\",\"build\":\"$build\",\"verdict\":\"$verdict\",\"seconds\":$(echo "$t1 - $t0" | bc),\"load\":\"$(cut -d' ' -f1 /proc/loadavg)\"}"
    done
  done < "$instances"
done
