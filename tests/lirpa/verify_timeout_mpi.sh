#!/bin/sh
# Usage: verify_timeout_mpi.sh TESSERA WORKDIR MPIRUN...
# `verify --shard fsdp` at 2 ranks on a random 784 -> 1024 x 2 -> 10 MLP whose property
# needs ReLU branch and bound, with a 3 s timeout (~2 s after start-up): the deadline falls
# in the full alpha-CROWN stage or branch and bound, and either the ranks stop there
# together or, when a step outlasts it, the watchdog answers. The last line of stdout must
# be `timeout`, mpirun must exit 0 (a rank that exits without MPI_Finalize would make mpirun
# fail the job), and the --json file must say timeout too (the watchdog writes every file
# the run was asked for). About one run in seven crashed while each rank timed the run from
# its own start (ShardedVerify.RunClockLengthIsRankZeros).
set -eu
tessera=$1 dir=$2
shift 2
here=$(dirname "$0")
/usr/bin/python3 "$here/../../bench/wide_mlp_instance.py" "$dir" --threshold -0.8 > /dev/null
set +e
"$@" -np 2 "$tessera" --threads 1 verify "$dir/mlp_784x1024x1024x10.onnx" "$dir/mlp_784x1024x1024x10.vnnlib" \
  --shard fsdp --timeout 3 --quiet --json "$dir/verify.json" > "$dir/stdout.txt" 2> "$dir/stderr.txt"
rc=$?
tail -n 1 "$dir/stdout.txt"
echo "rc=$rc"
/usr/bin/python3 -c 'import json, sys; print("json", json.load(open(sys.argv[1]))["verdict"])' "$dir/verify.json"
