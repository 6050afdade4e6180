#!/bin/sh
# Command-line mistakes and hostile input files: each exits with 2 and one line on
# standard error that names the problem (issue #27). An input box whose lower bound is
# above its upper bound is a warning naming the variable, then the verdict.
# Usage: exit_codes.sh TESSERA SHARED_DATA_DIR
tessera=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
passed=0

# expect_input_error NAME WORDS... -- ARGS...: exit code 2, one stderr line holding every WORD.
expect_input_error() {
  name=$1; shift
  words=""
  while [ "$1" != "--" ]; do words="$words $1"; shift; done
  shift
  "$tessera" "$@" >"$tmp/out" 2>"$tmp/err"
  code=$?
  ok=1
  [ $code -eq 2 ] || { echo "FAIL $name: exit code $code, expected 2"; ok=0; }
  lines=$(wc -l <"$tmp/err")
  [ "$lines" -eq 1 ] || { echo "FAIL $name: $lines lines on stderr, expected 1"; ok=0; }
  [ "$(wc -c <"$tmp/err")" -lt 400 ] || { echo "FAIL $name: message longer than 400 characters"; ok=0; }
  for w in $words; do
    grep -q -- "$w" "$tmp/err" || { echo "FAIL $name: message lacks '$w'"; ok=0; }
  done
  if [ $ok -eq 1 ]; then passed=$((passed + 1)); echo "ok   $name: $(cat "$tmp/err")"
  else failures=$((failures + 1)); sed 's/^/     stderr: /' "$tmp/err"; fi
}

model=$data/vnncomp2021/test/test_unsat.onnx
prop=$data/vnncomp2021/test/test_prop.vnnlib

expect_input_error unknown_method --method zonotope cg -- solve --poisson2d 4 --method zonotope
expect_input_error unknown_backend --backend X -- solve --poisson2d 4 --backend X
expect_input_error rtol_not_a_number --rtol abc -- solve --poisson2d 4 --rtol abc
expect_input_error zero_grid --poisson2d positive 0 -- solve --poisson2d 0
expect_input_error negative_timeout --timeout positive -5 -- verify "$model" "$prop" --timeout -5
expect_input_error negative_threads --threads -1 -- --threads -1 info
expect_input_error missing_model does_not_exist.onnx -- bounds "$tmp/does_not_exist.onnx" "$prop"
expect_input_error unknown_bound_method --method zonotope ibp -- bounds "$model" "$prop" --method zonotope
expect_input_error unknown_command no-such-command -- no-such-command

printf '%%%%MatrixMarket matrix coordinate real general\n100000000000 100000000000 1\n1 1 1\n' >"$tmp/rows.mtx"
expect_input_error mtx_rows_bomb rows.mtx:2: announces -- solve "$tmp/rows.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 900000000000\n1 1 1\n' >"$tmp/entries.mtx"
expect_input_error mtx_entries_bomb entries.mtx:3: missing -- solve "$tmp/entries.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 1\n' >"$tmp/A.mtx"
printf '%%%%MatrixMarket matrix array real general\n100000000000 100000000000\n1\n' >"$tmp/b.mtx"
expect_input_error mtx_dense_bomb b.mtx:2: announces -- solve "$tmp/A.mtx" --rhs "$tmp/b.mtx"

# An empty input box: X_0's upper bound moved below its lower bound.
sed 's/(assert (<= X_0 -0.29855281193475053))/(assert (<= X_0 -0.31))/' "$prop" >"$tmp/empty.vnnlib"
if grep -q -- '-0.31))' "$tmp/empty.vnnlib"; then
  "$tessera" verify "$model" "$tmp/empty.vnnlib" --timeout 20 --quiet >"$tmp/out" 2>"$tmp/err"
  code=$?
  if [ $code -eq 0 ] && grep -q "warning: .*X_0 .*empty" "$tmp/err" && [ "$(tail -n 1 "$tmp/out")" = unsat ]; then
    passed=$((passed + 1)); echo "ok   empty_box: $(cat "$tmp/err") -> $(tail -n 1 "$tmp/out")"
  else
    failures=$((failures + 1)); echo "FAIL empty_box: exit $code, stdout '$(tail -n 1 "$tmp/out")', stderr:"; cat "$tmp/err"
  fi
else
  failures=$((failures + 1)); echo "FAIL empty_box: the property's X_0 bound was not found to edit"
fi

echo "$passed passed, $failures failed"
[ $failures -eq 0 ]
