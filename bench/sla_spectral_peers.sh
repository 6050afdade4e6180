#!/bin/bash
# eigsh of tessera (default options, and each backend) and SciPy's eigsh (ARPACK) on 2D
# Poisson, one mode at a time, the peer right after tessera in the same shell run. A run
# longer than LIMIT seconds is stopped and written as {"timeout_seconds": LIMIT}.
# Writes every JSON line, with date and load averages, to $OUT/eigsh_peers.jsonl.
#
#   cmake --build build --target bench_sla_spectral && bench/sla_spectral_peers.sh 100 1000
#   MODES=largest,shift0 BACKENDS=auto LIMIT=600 REPEATS=1 bench/sla_spectral_peers.sh 1000
#   NCV=60 MODES=largest BACKENDS=auto bench/sla_spectral_peers.sh 1000   # both sides' Krylov space size
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results}
BENCH=${BENCH:-build/bench_sla_spectral}
MODES=${MODES:-largest,smallest,shift0}
BACKENDS=${BACKENDS:-auto,native,spectra}
LIMIT=${LIMIT:-600}
REPEATS=${REPEATS:-3}
THREADS=${THREADS:-2}
NCV=${NCV:-0}
PY=/usr/bin/python3
export GLOG_minloglevel=2 OMP_NUM_THREADS=$THREADS
mkdir -p "$OUT"
J=$OUT/eigsh_peers.jsonl
meta() { printf '{"bench": "meta", "what": "%s", "date": "%s", "loadavg": "%s"}\n' "$1" "$(date -u +%FT%TZ)" \
  "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$J"; }
# run WHO MODE N command...: the command's JSON lines, or a timeout line
run() {
  local who=$1 mode=$2 n=$3
  shift 3
  echo "+ $*" >&2
  timeout "$LIMIT" "$@" | tee -a "$J"
  if [[ ${PIPESTATUS[0]} == 124 ]]; then
    printf '{"bench": "eigsh", "backend": "%s", "mode": "%s", "n": %d, "timeout_seconds": %d}\n' \
      "$who" "$mode" "$n" "$LIMIT" | tee -a "$J"
  fi
}
meta "start threads=$THREADS cores=$(nproc) limit=$LIMIT repeats=$REPEATS ncv=$NCV $(git rev-parse --short HEAD)"
for m in "${@:-100}"; do
  for mode in ${MODES//,/ }; do
    for backend in ${BACKENDS//,/ }; do
      run "$backend" "$mode" $((m * m)) "$BENCH" --eigsh-only --repeats "$REPEATS" --backends "$backend" \
        --modes "$mode" --ncv "$NCV" "$m"
    done
    run scipy-arpack "$mode" $((m * m)) "$PY" bench/sla_spectral_peer.py --repeats "$REPEATS" --modes "$mode" --ncv "$NCV" "$m"
    meta "done m=$m mode=$mode"
  done
done
meta "end"
