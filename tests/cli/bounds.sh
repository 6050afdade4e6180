#!/bin/sh
# CLI tests of `tessera bounds` (registered in tests/CMakeLists.txt as cli_bounds_<case>).
# Usage: bounds.sh CASE TESSERA VNNCOMP_DIR
#   unknown_shard_exit2  --shard with an unknown mode: an error naming it, exit 2
case_name=$1
tessera=$2
vnncomp=$3
case $case_name in
  unknown_shard_exit2)
    "$tessera" bounds "$vnncomp/test/test_small.onnx" "$vnncomp/test/test_small.vnnlib" --shard zigzag 2>&1
    echo rc=$? ;;
  *)
    echo "bounds.sh: unknown case '$case_name'" >&2; exit 2 ;;
esac
