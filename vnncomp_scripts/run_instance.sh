#!/bin/bash
# VNN-COMP tool interface: run_instance.sh VERSION CATEGORY ONNX VNNLIB RESULTS_FILE TIMEOUT
# Writes RESULTS_FILE: sat (with the counterexample), unsat, timeout or unknown.
set -u
if [ "$#" -ne 6 ]; then
  echo "usage: $0 v1 CATEGORY ONNX VNNLIB RESULTS_FILE TIMEOUT" >&2
  exit 1
fi
VERSION="$1"; CATEGORY="$2"; ONNX="$3"; VNNLIB="$4"; RESULTS="$5"; TIMEOUT="$6"
if [ "$VERSION" != "v1" ]; then
  echo "expected interface version v1, got '$VERSION'" >&2
  exit 1
fi
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ONNX_FILE="$(unpacked "$ONNX")" || exit 1
VNNLIB_FILE="$(unpacked "$VNNLIB")" || exit 1
# leave ~2 s of the budget for start-up and loading
BUDGET="$(awk -v t="$TIMEOUT" 'BEGIN { b = t - 2; if (b < 1) b = 1; print b }')"
CONFIG_ARGS=()
CONFIG="$TESSERA_ROOT/vnncomp_scripts/configs/$CATEGORY.yaml"
if [ -f "$CONFIG" ]; then CONFIG_ARGS=(--config "$CONFIG"); fi
echo "running tessera on $CATEGORY: $ONNX_FILE $VNNLIB_FILE (timeout $TIMEOUT s)"
"$TESSERA_BIN" verify "$ONNX_FILE" "$VNNLIB_FILE" --timeout "$BUDGET" --results "$RESULTS" --quiet "${CONFIG_ARGS[@]}"
STATUS=$?
if [ "$STATUS" -ne 0 ]; then
  echo "error" > "$RESULTS"
fi
exit 0
