# Sourced by the command-line test scripts: `check NAME COMMAND...` counts the command's
# status as one check and prints it; `checks_done` prints the count and fails on any failure.
failures=0
passed=0
check() {
  name=$1
  shift
  if "$@"; then passed=$((passed + 1)); echo "ok   $name"; else failures=$((failures + 1)); echo "FAIL $name"; fi
}
checks_done() {
  echo "$passed passed, $failures failed"
  [ $failures -eq 0 ]
}
