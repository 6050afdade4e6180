#!/bin/sh
# tessera's executables start libgomp with a short spin-wait unless the user chose one
# (src/startup/omp_wait_preinit.cpp): libgomp itself reports the value it read
# (OMP_DISPLAY_ENV), and `tessera info` says whose choice it was.
# Usage: omp_wait.sh TESSERA
tessera=$1
failures=0
check() {  # check NAME EXPECTED_TEXT FILE
  if grep -q -- "$2" "$3"; then echo "ok   $1"; else echo "FAIL $1: no '$2' in:"; cat "$3"; failures=$((failures + 1)); fi
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
default=$(sed -n 's/^#define TESSERA_DEFAULT_GOMP_SPINCOUNT "\([0-9]*\)"/\1/p' "$(dirname "$0")/../../include/tessera/core/omp_wait.h")

env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_DISPLAY_ENV=verbose "$tessera" info >"$out" 2>&1
check libgomp_reads_the_default "GOMP_SPINCOUNT = '$default'" "$out"
check info_names_the_default "omp_wait: \"GOMP_SPINCOUNT=$default (tessera default)\"" "$out"

env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=777 OMP_DISPLAY_ENV=verbose "$tessera" info >"$out" 2>&1
check the_users_spin_count_is_kept "GOMP_SPINCOUNT = '777'" "$out"
check info_names_the_environment "omp_wait: \"GOMP_SPINCOUNT=777 (environment)\"" "$out"

env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=active "$tessera" info >"$out" 2>&1
check the_users_policy_is_kept "omp_wait: \"OMP_WAIT_POLICY=active (environment)\"" "$out"

[ $failures -eq 0 ] && echo "5 passed, 0 failed" || echo "$((5 - failures)) passed, $failures failed"
[ $failures -eq 0 ]
