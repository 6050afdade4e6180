#!/bin/bash
# SpMV, CG and direct-solve benchmarks of tessera with their peers in one session:
# tessera bench spmv|cg|direct, Eigen's ConjugateGradient (build/bench_eigen_cg), SciPy CG,
# a CG over torch CSR tensors and SciPy spsolve (bench/sla_peers.py, /usr/bin/python3).
# Writes $OUT/sla_perf.jsonl (every JSON line, with load averages) and $OUT/sla_ratios.json.
#
#   cmake --build build --target tessera bench_eigen_cg bench_plain_csr_spmv && bench/sla_peers.sh
#   QUICK=1 bench/sla_peers.sh        # small sizes only (a smoke run)
#   ONLY=general bench/sla_peers.sh   # only the generated matrices that are not stencils
#   ONLY=general ROUNDS=3 GENERAL="diffusion2d:4096" IT=60 bench/sla_peers.sh   # 16.8M DOF, 3 rounds
# GENERAL lists them as name:n (tessera bench cg --matrix; Eigen and SciPy on the same CSR):
# CG with Jacobi, every solver the same $IT iterations; tessera with solve's default product
# (auto: symmetric SELL, SELL-C-sigma or CSR, never the stencil form here) and with the plain CSR product.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results}
TESSERA=${TESSERA:-build/tessera}
EIGEN=${EIGEN:-build/bench_eigen_cg}
PLAIN=${PLAIN:-build/bench_plain_csr_spmv}
THREADS=${THREADS:-2}
IT=${IT:-200}
PY=/usr/bin/python3
# passive: OpenMP threads sleep instead of spinning while they wait, which on a shared
# (oversubscribed) machine keeps a team from stalling on a descheduled thread; applies to
# tessera, Eigen and torch alike (all use libgomp). Set OMP_WAIT_POLICY=active on an idle machine.
export GLOG_minloglevel=2 OMP_NUM_THREADS=$THREADS OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
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

if [[ -n "${QUICK:-}" ]]; then
  GENERAL=${GENERAL:-"diffusion2d:128 diffusion3d:24 fe-laplacian2d:128"}
else
  GENERAL=${GENERAL:-"diffusion2d:1000 diffusion3d:100 fe-laplacian2d:1000"}
fi
# ROUNDS: the general matrices' three solvers run in turn this many times; the ratios are
# taken round by round (each against its neighbours in time) and their median reported, so a
# shared machine's slow minutes fall on every solver of a round alike.
ROUNDS=${ROUNDS:-1}
general() {
  for round in $(seq "$ROUNDS"); do
    for spec in $GENERAL; do
      local name=${spec%%:*} n=${spec##*:}
      meta "cg general matrix=$name n=$n iterations=$IT round=$round"
      run "$TESSERA" --threads "$THREADS" bench cg --matrix "$name" --n "$n" --iterations "$IT" --repeats 3 \
        --formats auto,csr --preconditioners jacobi
      run "$EIGEN" "$n" "$THREADS" 3 0 diagonal "$IT" "$name"
      PYTHONPATH=build/python run "$PY" bench/sla_peers.py --matrix "$name" --n "$n" --iterations "$IT" --repeats 3 \
        --solvers scipy-cg-jacobi
    done
  done
}

meta "start threads=$THREADS cores=$(nproc) OMP_WAIT_POLICY=$OMP_WAIT_POLICY"
if [[ "${ONLY:-}" == general ]]; then
  general
  meta "end"
  "$PY" bench/sla_ratios.py "$J" > "$OUT/sla_ratios.json"
  cat "$OUT/sla_ratios.json"
  exit 0
fi
for n in $SPMV_SIZES; do
  run "$TESSERA" --threads "$THREADS" bench spmv --n "$n"
  run "$PLAIN" "$n"   # the textbook OpenMP CSR kernel and its own triad, for reference
done
# time per iteration: every solver runs exactly $IT iterations (rtol 0), medians of 3
for n in $CG_SIZES; do
  meta "cg n=$n iterations=$IT"
  run "$TESSERA" --threads "$THREADS" bench cg --n "$n" --iterations "$IT" --repeats 3
  run "$EIGEN" "$n" "$THREADS" 3 0 diagonal "$IT"
  run "$EIGEN" "$n" "$THREADS" 3 0 identity "$IT"
  run "$PY" bench/sla_peers.py --n "$n" --iterations "$IT" --repeats 3 --threads "$THREADS" --solvers scipy-cg,torch-cg
done
# to convergence (rtol 1e-8, random b): iteration counts and time to solution
meta "cg n=$DIRECT rtol=1e-8"
run "$TESSERA" --threads "$THREADS" bench cg --n "$DIRECT" --rtol 1e-8 --repeats 3 --preconditioners none
run "$PY" bench/sla_peers.py --n "$DIRECT" --rtol 1e-8 --repeats 1 --solvers scipy-cg
meta "cg fixed iterations n=$BIG"
run "$TESSERA" --threads "$THREADS" bench cg --n "$BIG" --iterations 50 --repeats 3 --preconditioners none
meta "direct n=$DIRECT"
run "$TESSERA" --threads "$THREADS" bench direct --n "$DIRECT" --repeats 3
run "$PY" bench/sla_peers.py --n "$DIRECT" --repeats 1 --solvers scipy-spsolve
general
meta "end"
"$PY" bench/sla_ratios.py "$J" > "$OUT/sla_ratios.json"
cat "$OUT/sla_ratios.json"
