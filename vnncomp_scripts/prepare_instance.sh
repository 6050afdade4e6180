#!/bin/bash
# VNN-COMP tool interface: prepare_instance.sh VERSION CATEGORY ONNX VNNLIB
# Starts the instances' server (common.sh) unless one answers, then checks that the network
# and the property load and match (exit 0), so that the timed run_instance.sh starts clean.
# The server caches no instance: each command is a fresh process forked from it.
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
if [ -n "${TESSERA_SERVER:-}" ]; then
  # a second server on the socket exits at once ("already listens"); this one ends after 30
  # minutes without an instance
  setsid "$TESSERA_BIN" serve --socket "$TESSERA_SERVER" --idle-exit 1800 </dev/null >/dev/null 2>&1 &
  for _ in $(seq 1 100); do [ -S "$TESSERA_SERVER" ] && [ -S "$TESSERA_SERVER.passive" ] && break; sleep 0.1; done
fi
# IBP bounds: loads both files and checks they match
"$TESSERA_BIN" bounds "$ONNX_FILE" "$VNNLIB_FILE" --method ibp --json > /dev/null || exit 1
exit 0
