#!/usr/bin/env bash
# Runs the unit tests of a sanitizer build (`make sanitize`: build-sanitize, gcc's
# AddressSanitizer and UndefinedBehaviorSanitizer) through ctest, one process per test: the
# gtest suites of every layer and of the command line. The multi-process suites and the
# tests of the `tessera` program are left out (mpirun's own processes are not instrumented;
# the program is not built there).
# A report of either sanitizer ends its test with a failure (halt_on_error). Leaks are
# detected; the suppressions (tests/sanitize/*.supp) name only third-party libraries.
# ASan's fast unwinder cannot walk through libraries built without frame pointers
# (OpenMPI), so their leak stacks end in garbage and no suppression can match them: the
# tests that failed are run once more with the exact unwinder (fast_unwind_on_malloc=0,
# ~4x slower), and that second run's answer is final.
# Usage: tests/sanitize/run.sh [BUILD_DIR] [extra ctest args...]; exit status is ctest's.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build-sanitize}; shift || true
export GLOG_minloglevel=2
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-suppressions=$here/ubsan.supp:print_stacktrace=1:halt_on_error=1}
echo "sanitize: $build, load $(cat /proc/loadavg), $(date -u '+%F %T') UTC"
start=$(date +%s)
cd "$build" || exit 2
ctest -L '^(core|dist|sla|lirpa|apps)$' -LE '^(mpi|cli)$' -j"${JOBS:-2}" --timeout 1800 --output-on-failure "$@"
rc=$?
if [[ $rc -ne 0 ]]; then
  echo "sanitize: again with the exact unwinder: $(grep -c . Testing/Temporary/LastTestsFailed.log) failed tests"
  ASAN_OPTIONS=$ASAN_OPTIONS:fast_unwind_on_malloc=0 \
    ctest --rerun-failed -j"${JOBS:-2}" --timeout 1800 --output-on-failure
  rc=$?
fi
echo "sanitize: ctest exit $rc in $(( $(date +%s) - start )) s, load $(cat /proc/loadavg)"
exit $rc
