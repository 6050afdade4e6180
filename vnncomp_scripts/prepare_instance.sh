#!/bin/bash
# VNN-COMP tool interface: prepare_instance.sh VERSION CATEGORY ONNX VNNLIB
# Checks that the network and the property load and match (exit 0), so that the timed
# run_instance.sh starts clean. Nothing is cached between instances.
set -u
if [ "$#" -ne 4 ]; then
  echo "usage: $0 v1 CATEGORY ONNX VNNLIB" >&2
  exit 1
fi
VERSION="$1"; CATEGORY="$2"; ONNX="$3"; VNNLIB="$4"
if [ "$VERSION" != "v1" ]; then
  echo "expected interface version v1, got '$VERSION'" >&2
  exit 1
fi
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
echo "preparing tessera for $CATEGORY: $ONNX $VNNLIB"
ONNX_FILE="$(unpacked "$ONNX")" || exit 1
VNNLIB_FILE="$(unpacked "$VNNLIB")" || exit 1
# IBP bounds: loads both files and checks they match
"$TESSERA_BIN" bounds "$ONNX_FILE" "$VNNLIB_FILE" --method ibp --json > /dev/null || exit 1
exit 0
