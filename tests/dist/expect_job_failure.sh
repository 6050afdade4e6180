#!/usr/bin/env bash
# Usage: expect_job_failure.sh SECONDS MODE COMMAND...
# Passes when COMMAND exits non-zero within SECONDS (no hang) and, for MODE=throw, names
# the failing rank and the error in its output; for MODE=text=TEXT, names rank 1 and TEXT.
set -u
limit=$1; mode=$2; shift 2
out=$(mktemp)
start=$(date +%s%N)
timeout --kill-after=5 "$((limit + 30))" "$@" >"$out" 2>&1
code=$?
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
elapsed="$((elapsed_ms / 1000)).$(printf %03d $((elapsed_ms % 1000)))"
cat "$out"
echo "exit code $code after ${elapsed}s"
fail() { echo "FAIL: $*"; rm -f "$out"; exit 1; }
[ "$code" -ne 0 ] || fail "the job exited 0 although rank 1 failed"
[ "$code" -ne 124 ] || fail "the job hung until stopped by timeout"
(( elapsed_ms < limit * 1000 )) || fail "the job took ${elapsed}s, more than ${limit}s"
if [[ "$mode" == text=* ]]; then
  grep -q "error on rank 1 of" "$out" || fail "no message naming rank 1"
  grep -qF "${mode#text=}" "$out" || fail "the error's text '${mode#text=}' is missing"
fi
if [ "$mode" = throw ]; then
  grep -q "error on rank 1 of 2" "$out" || fail "no message naming rank 1"
  grep -q "deliberate failure on rank 1" "$out" || fail "the error's text is missing"
fi
rm -f "$out"
echo PASS
