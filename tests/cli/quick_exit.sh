#!/bin/sh
# tessera-main ends with std::_Exit once its output is flushed (apps/tessera/main.cpp): no
# library's exit handlers run (the dynamic loader's LD_DEBUG=libs log has no "calling fini"),
# and yet every output is complete, also when standard output is a file (fully buffered):
# --version, a verdict with its --results and --json files, and an error's exit code.
# Usage: quick_exit.sh TESSERA VNNCOMP_DIR WORK_DIR
tessera=$1
vnncomp=$2
work=$3
. "$(dirname "$0")/checks.sh"
no_fini() { ! grep -q "calling fini" "$1"; }
out=$work/quick_exit.out
log=$work/quick_exit.log
rm -f "$out" "$log" "$work/quick_exit_results.txt" "$work/quick_exit.json"

LD_DEBUG=libs "$tessera" --version >"$out" 2>"$log"
check version_exit_0 test $? -eq 0
check version_printed grep -q "^[0-9]" "$out"
check loader_log_works grep -q "calling init" "$log"
check version_no_exit_handlers no_fini "$log"

LD_DEBUG=libs "$tessera" verify "$vnncomp/test/test_unsat.onnx" "$vnncomp/test/test_prop.vnnlib" --timeout 30 \
  --results "$work/quick_exit_results.txt" --json "$work/quick_exit.json" >"$out" 2>"$log"
check verify_exit_0 test $? -eq 0
check verdict_last_line test "$(tail -n 1 "$out")" = unsat
check results_file test "$(head -n 1 "$work/quick_exit_results.txt")" = unsat
check json_file grep -q '"verdict":"unsat"' "$work/quick_exit.json"
check progress_on_stderr grep -q "unsat (by" "$log"
check verify_no_exit_handlers no_fini "$log"

printf '(declare-const X_0 Real)\n(assert (<= X_0 oops))\n' >"$work/quick_exit_bad.vnnlib"
"$tessera" verify "$vnncomp/test/test_unsat.onnx" "$work/quick_exit_bad.vnnlib" >"$out" 2>"$log"
check error_exit_2 test $? -eq 2
check error_message grep -q "quick_exit_bad.vnnlib" "$log"

checks_done
