#!/bin/sh
# The tessera launcher starts tessera-main with OpenMP threads that sleep instead of
# spinning (OMP_WAIT_POLICY=passive) when another process keeps a core busy at start, and
# keeps the user's own choice: libgomp itself reports what it read (OMP_DISPLAY_ENV; a
# passive policy is a spin count of 0), and `tessera info` says whose choice it was. It also
# passes the count of busy processes on, from which tessera-main takes the free cores as its
# default thread count (core::threads_for_load) once its own second sampling confirms them.
# Usage: omp_wait.sh TESSERA
tessera=$1
failures=0
check() {  # check NAME EXPECTED_TEXT FILE
  if grep -q -- "$2" "$3"; then echo "ok   $1"; else echo "FAIL $1: no '$2' in:"; cat "$3"; failures=$((failures + 1)); fi
}
out=$(mktemp)
busy=""
trap 'rm -f "$out"; [ -n "$busy" ] && kill $busy 2>/dev/null' EXIT

# beside a busy process: passive
sh -c 'while :; do :; done' &
busy=$!
sleep 0.5
env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u TESSERA_THREADS OMP_DISPLAY_ENV=verbose "$tessera" info >"$out" 2>&1
check busy_machine_libgomp_reads_passive "GOMP_SPINCOUNT = '0'" "$out"
check busy_machine_info_says_why "omp_wait: \"OMP_WAIT_POLICY=passive (tessera: the machine was busy at start)\"" "$out"
# the launcher passes the count on (how many others ran depends on what else runs beside)
check busy_machine_count_passed_on "running when counted" "$out"
env -u TESSERA_THREADS "$tessera" --threads 2 info >"$out" 2>&1
check busy_machine_threads_option_kept "threads_from: \"--threads\"" "$out"

# tessera-main's default from a given count (the busy process still running, so that its own
# second sampling confirms at least one): the free cores when some but not all are taken
main="$(dirname "$tessera")/tessera-main"
cores=$(nproc)
env -u TESSERA_THREADS TESSERA_BUSY_AT_START=1 "$main" info >"$out" 2>&1
if [ "$cores" -gt 1 ]; then
  check one_busy_leaves_the_free_cores "threads: $((cores - 1))" "$out"
  check one_busy_says_why "threads_from: \"the free cores ($cores cores, 1 other process running when counted)\"" "$out"
else
  check one_busy_leaves_the_free_cores "threads: 1" "$out"
  check one_busy_says_why "threads_from: \"every core (1 core, 1 other process running when counted: none free)\"" "$out"
fi
env -u TESSERA_THREADS TESSERA_BUSY_AT_START=$cores "$main" info >"$out" 2>&1
check all_busy_keeps_every_core "threads: $cores" "$out"
TESSERA_THREADS=2 TESSERA_BUSY_AT_START=1 "$main" info >"$out" 2>&1
check the_users_thread_count_is_kept "threads_from: \"TESSERA_THREADS\"" "$out"
kill $busy; busy=""

# the user's choice is kept (busy or not)
env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=777 OMP_DISPLAY_ENV=verbose "$tessera" info >"$out" 2>&1
check the_users_spin_count_is_kept "GOMP_SPINCOUNT = '777'" "$out"
check info_names_the_environment "omp_wait: \"GOMP_SPINCOUNT=777 (environment)\"" "$out"
env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=active "$tessera" info >"$out" 2>&1
check the_users_policy_is_kept "omp_wait: \"OMP_WAIT_POLICY=active (environment)\"" "$out"

[ $failures -eq 0 ] && echo "12 passed, 0 failed" || echo "$((12 - failures)) passed, $failures failed"
[ $failures -eq 0 ]
