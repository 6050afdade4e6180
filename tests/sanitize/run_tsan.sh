#!/usr/bin/env bash
# Runs the unit tests of a ThreadSanitizer build (`make sanitize`: build-tsan, gcc
# -fsanitize=thread) through ctest, with two OpenMP threads.
# libgomp is not instrumented, so TSan does not see its barriers and reports every OpenMP
# region's writes against the reads after it. LLVM's OpenMP runtime (libomp, package
# libomp-14-dev) implements libgomp's interface and, with its Archer tool, tells TSan about
# OpenMP's synchronisation: it stands in for libgomp here (a libgomp.so.1 link to it first
# on LD_LIBRARY_PATH, for tessera, LibTorch and OpenBLAS alike). Without libomp and Archer
# the tests run with one OpenMP thread, which checks only tessera's own threads.
# Usage: tests/sanitize/run_tsan.sh [BUILD_DIR] [ctest args...] (default: the core tests)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build-tsan}; shift || true
[[ $# -gt 0 ]] || set -- -L '^core$'
export GLOG_minloglevel=2
export TSAN_OPTIONS=${TSAN_OPTIONS:-suppressions=$here/tsan.supp:halt_on_error=1:second_deadlock_stack=1}
libomp=$(ls /usr/lib/llvm-*/lib/libomp.so.5 2>/dev/null | sort -V | tail -n 1)
archer=${libomp:+$(dirname "$libomp")/libarcher.so}
if [[ -n $libomp && -f $archer ]]; then
  shim=$(mktemp -d)
  trap 'rm -rf "$shim"' EXIT
  ln -s "$libomp" "$shim/libgomp.so.1"
  export LD_LIBRARY_PATH=$shim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export OMP_TOOL_LIBRARIES=$archer OMP_NUM_THREADS=2 TESSERA_THREADS=2
  echo "sanitize (thread): OpenMP through $libomp with Archer, 2 threads"
else
  export OMP_NUM_THREADS=1 TESSERA_THREADS=1
  echo "sanitize (thread): no libomp/Archer (libomp-14-dev): one OpenMP thread"
fi
echo "sanitize (thread): $build, load $(cat /proc/loadavg), $(date -u '+%F %T') UTC"
start=$(date +%s)
cd "$build" || exit 2
ctest -j"${JOBS:-2}" --timeout 1800 --output-on-failure "$@"
rc=$?
echo "sanitize (thread): ctest exit $rc in $(( $(date +%s) - start )) s, load $(cat /proc/loadavg)"
exit $rc
