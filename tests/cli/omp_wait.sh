#!/bin/sh
# The tessera launcher starts tessera-main with OpenMP threads that sleep instead of
# spinning (OMP_WAIT_POLICY=passive) unless the user chose a policy: libgomp itself reports
# what it read (OMP_DISPLAY_ENV: a passive policy is a spin count of 0), and `tessera info`
# says whose choice it was.
# Usage: omp_wait.sh TESSERA
tessera=$1
failures=0
check() {  # check NAME EXPECTED_TEXT FILE
  if grep -q -- "$2" "$3"; then echo "ok   $1"; else echo "FAIL $1: no '$2' in:"; cat "$3"; failures=$((failures + 1)); fi
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
policy=$(sed -n 's/^#define TESSERA_DEFAULT_OMP_WAIT_POLICY "\([a-z]*\)"/\1/p' "$(dirname "$0")/../../include/tessera/core/omp_wait.h")
[ "$policy" = passive ] || { echo "FAIL the default policy is '$policy'; this test expects passive"; exit 1; }

env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_DISPLAY_ENV=verbose "$tessera" info >"$out" 2>&1
check libgomp_reads_the_default "GOMP_SPINCOUNT = '0'" "$out"
check info_names_the_default "omp_wait: \"OMP_WAIT_POLICY=passive (tessera default)\"" "$out"

env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=777 OMP_DISPLAY_ENV=verbose "$tessera" info >"$out" 2>&1
check the_users_spin_count_is_kept "GOMP_SPINCOUNT = '777'" "$out"
check info_names_the_environment "omp_wait: \"GOMP_SPINCOUNT=777 (environment)\"" "$out"

env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=active "$tessera" info >"$out" 2>&1
check the_users_policy_is_kept "omp_wait: \"OMP_WAIT_POLICY=active (environment)\"" "$out"

[ $failures -eq 0 ] && echo "5 passed, 0 failed" || echo "$((5 - failures)) passed, $failures failed"
[ $failures -eq 0 ]
