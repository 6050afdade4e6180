#!/bin/sh
# CLI tests of --memory-cap (registered in tests/CMakeLists.txt as cli_memory_cap_<case>); each
# prints the program's output and then rc=<exit code>.
# Usage: memory_cap.sh CASE TESSERA VNNCOMP_DIR [MPIRUN ARGS...]
#   exit5          one process over a 4 MiB cap: an error naming the cap and the bytes, exit 5
#   np2_tp_exit5   the same under mpirun -np 2 with --shard tp: the job ends with exit 5
#   bad_size_exit2 a cap that is not a byte size: an error naming it, exit 2
case_name=$1
tessera=$2
vnncomp=$3
shift 3
net=$vnncomp/mnistfc/mnist-net_256x2.onnx
prop=$vnncomp/mnistfc/prop_0_0.03.vnnlib
case $case_name in
  exit5)
    "$tessera" --memory-cap 4M bounds "$net" "$prop" --spec --method crown 2>&1; echo rc=$? ;;
  np2_tp_exit5)
    "$@" -np 2 "$tessera" --memory-cap 4M bounds "$net" "$prop" --spec --method crown --shard tp 2>&1
    echo rc=$? ;;
  bad_size_exit2)
    "$tessera" --memory-cap 1.5G info 2>&1; echo rc=$? ;;
  *)
    echo "memory_cap.sh: unknown case '$case_name'" >&2; exit 2 ;;
esac
