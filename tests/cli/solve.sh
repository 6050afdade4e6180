#!/bin/sh
# CLI tests of `tessera solve` (registered in tests/CMakeLists.txt as cli_solve_<case>).
# Usage: solve.sh CASE TESSERA [NOT_A_MATRIX_FILE]
#   not_converged_exit3  a solve stopped by --maxiter exits with 3
#   bad_file_exit2       a file that is not a matrix exits with 2
case_name=$1
tessera=$2
case $case_name in
  not_converged_exit3)
    "$tessera" solve --poisson2d 30 --method cg --maxiter 3 --json; test $? -eq 3 ;;
  bad_file_exit2)
    "$tessera" solve "$3"; test $? -eq 2 ;;
  *)
    echo "solve.sh: unknown case '$case_name'" >&2; exit 2 ;;
esac
