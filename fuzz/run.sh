#!/usr/bin/env bash
# Runs every fuzz target (or those named) for FUZZ_SECONDS each (default 60), one after the
# other at nice 10. Seeds: the committed corpus fuzz/corpus/<target>, the regression inputs
# fuzz/regressions/<target>/, and the matching files of ../shared/data (read in place); a
# dictionary fuzz/<target>.dict when there is one.
# New inputs go to build-fuzz/work/<target>, crash inputs to build-fuzz/artifacts/<target>/.
# Exit status 1 when any target found a crash, hang, leak or sanitizer report.
# Usage: fuzz/run.sh [build-fuzz] [target...]; FUZZ_ARGS adds libFuzzer flags.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-fuzz}; shift || true
seconds=${FUZZ_SECONDS:-60}
shared=${TESSERA_SHARED_DATA:-$root/../shared/data}
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(vnnlib matrix_market verify_config onnx cli)
export GLOG_minloglevel=2 OMP_NUM_THREADS=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Seed files from the shared data, by extension (small ones: large inputs slow every run).
seed_list() {
  local ext max
  case $1 in
    vnnlib) ext=vnnlib max=400k ;;
    matrix_market) ext=mtx max=100k ;;
    onnx) ext=onnx max=100k ;;
    *) return ;;
  esac
  [[ -d $shared ]] || return
  find "$shared" -name "*.$ext" -size -"$max" -type f | sort | paste -sd, -
}

status=0
for t in "${targets[@]}"; do
  bin=$build/fuzz_$t
  [[ -x $bin ]] || { echo "fuzz: $bin not built" >&2; status=1; continue; }
  work=$build/work/$t art=$build/artifacts/$t/
  mkdir -p "$work" "$art" "$root/fuzz/regressions/$t"
  args=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$art")
  [[ -f $root/fuzz/$t.dict ]] && args+=(-dict="$root/fuzz/$t.dict")
  seeds=$(seed_list "$t")
  if [[ -n $seeds ]]; then
    printf '%s' "$seeds" > "$build/work/$t.seeds"
    args+=(-seed_inputs=@"$build/work/$t.seeds")
  fi
  echo "== fuzz_$t: ${seconds} s, load $(cat /proc/loadavg)"
  log=$build/work/$t.log
  nice -n 10 "$bin" "${args[@]}" ${FUZZ_ARGS:-} "$work" "$root/fuzz/corpus/$t" "$root/fuzz/regressions/$t" >"$log" 2>&1
  rc=$?
  grep -E '^stat::|^Done|ERROR|SUMMARY|crash-|timeout-|leak-|oom-' "$log" | head -20
  if [[ $rc -ne 0 ]]; then echo "fuzz_$t: FAILED (exit $rc), log $log, inputs in $art"; status=1; fi
done
exit $status
