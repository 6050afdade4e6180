#!/bin/bash
# SpMV, CG and direct-solve benchmarks of tessera with their peers in one session:
# tessera bench spmv|cg|direct, Eigen's ConjugateGradient (build/bench_eigen_cg), SciPy CG,
# a CG over torch CSR tensors and SciPy spsolve (bench/sla_peers.py, /usr/bin/python3).
# Writes $OUT/sla_perf.jsonl (every JSON line, with load averages) and $OUT/sla_ratios.json.
#
#   cmake --build build --target tessera bench_eigen_cg && bench/sla_peers.sh
#   QUICK=1 bench/sla_peers.sh        # small sizes only (a smoke run)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results}
TESSERA=${TESSERA:-build/tessera}
EIGEN=${EIGEN:-build/bench_eigen_cg}
THREADS=${THREADS:-2}
PY=/usr/bin/python3
export GLOG_minloglevel=2 OMP_NUM_THREADS=$THREADS
if [[ -n "${QUICK:-}" ]]; then
  CG_SIZES=${CG_SIZES:-"128 256"}; SPMV_SIZES="256 512"; BIG=300; DIRECT=200
else
  CG_SIZES=${CG_SIZES:-"256 512 1000"}; SPMV_SIZES="1000 4000"; BIG=4000; DIRECT=1000
fi
mkdir -p "$OUT"
J=$OUT/sla_perf.jsonl
: > "$J"
meta() { printf '{"bench": "meta", "what": "%s", "date": "%s", "loadavg": "%s"}\n' "$1" "$(date -u +%FT%TZ)" \
  "$(cut -d' ' -f1-3 /proc/loadavg)" >> "$J"; }
run() { echo "+ $*" >&2; "$@" | tee -a "$J"; }

meta "start threads=$THREADS $(nproc) cores"
for n in $SPMV_SIZES; do
  run "$TESSERA" --threads "$THREADS" bench spmv --n "$n"
done
for n in $CG_SIZES; do
  meta "cg n=$n"
  run "$TESSERA" --threads "$THREADS" bench cg --n "$n" --rtol 1e-8 --repeats 3
  run "$EIGEN" "$n" "$THREADS" 3 1e-8 diagonal
  run "$EIGEN" "$n" "$THREADS" 3 1e-8 identity
  run "$PY" bench/sla_peers.py --n "$n" --rtol 1e-8 --repeats 3 --threads "$THREADS" --solvers scipy-cg,torch-cg
done
meta "cg fixed iterations n=$BIG"
run "$TESSERA" --threads "$THREADS" bench cg --n "$BIG" --iterations 100 --repeats 3
meta "direct n=$DIRECT"
run "$TESSERA" --threads "$THREADS" bench direct --n "$DIRECT" --repeats 3
run "$PY" bench/sla_peers.py --n "$DIRECT" --repeats 1 --solvers scipy-spsolve
meta "end"
"$PY" bench/sla_ratios.py "$J" > "$OUT/sla_ratios.json"
cat "$OUT/sla_ratios.json"
