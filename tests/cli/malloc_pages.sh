#!/bin/sh
# The tessera launcher starts tessera-main with glibc's malloc asking for transparent huge
# pages (glibc.malloc.hugetlb=1 added to GLIBC_TUNABLES, other tunables kept), unless the
# user's GLIBC_TUNABLES sets glibc.malloc.hugetlb itself; `tessera info` says which applies,
# and this glibc's loader accepts the list tessera-main was started with
# (ld.so --list-tunables parses GLIBC_TUNABLES as the program's loader did).
# Usage: malloc_pages.sh TESSERA
tessera=$1
failures=0
checks=0
check() {  # check NAME EXPECTED_TEXT FILE
  checks=$((checks + 1))
  if grep -q -- "$2" "$3"; then echo "ok   $1"; else echo "FAIL $1: no '$2' in:"; cat "$3"; failures=$((failures + 1)); fi
}
out=$(mktemp)
tunables=$(mktemp)
trap 'rm -f "$out" "$tunables"' EXIT

env -u GLIBC_TUNABLES -u TESSERA_MALLOC_DEFAULT "$tessera" info >"$out" 2>&1
check launcher_asks_for_huge_pages 'malloc_pages: "glibc.malloc.hugetlb=1 (tessera)"' "$out"

# the user's other tunables are kept, and glibc reads the list as the program gets it
env -u TESSERA_MALLOC_DEFAULT GLIBC_TUNABLES=glibc.malloc.arena_max=3 "$tessera" info >"$out" 2>&1
check other_tunables_kept_beside_it \
  'malloc_pages: "glibc.malloc.hugetlb=1 (tessera), GLIBC_TUNABLES=glibc.malloc.arena_max=3:glibc.malloc.hugetlb=1"' "$out"
list=$(sed -n 's/^malloc_pages: ".*GLIBC_TUNABLES=\([^"]*\)"$/\1/p' "$out")
loader=$(ls /lib64/ld-linux-*.so.* /lib/*-linux-gnu/ld-linux-*.so.* 2>/dev/null | head -n 1)
if [ -n "$list" ] && [ -n "$loader" ] && "$loader" --list-tunables >/dev/null 2>&1; then
  GLIBC_TUNABLES="$list" "$loader" --list-tunables >"$tunables" 2>&1
  check glibc_reads_hugetlb "glibc.malloc.hugetlb: 0x1" "$tunables"
  check glibc_reads_the_users_tunable "glibc.malloc.arena_max: 0x3" "$tunables"
else
  echo "skip glibc_reads_hugetlb: this loader has no --list-tunables"
fi

# the user's own choice is kept
env -u TESSERA_MALLOC_DEFAULT GLIBC_TUNABLES=glibc.malloc.hugetlb=0 "$tessera" info >"$out" 2>&1
check the_users_setting_is_kept 'malloc_pages: "glibc.malloc.hugetlb=0 (environment)"' "$out"

[ $failures -eq 0 ] && echo "$checks passed, 0 failed" || echo "$((checks - failures)) passed, $failures failed"
[ $failures -eq 0 ]
