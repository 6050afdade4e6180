#!/bin/sh
# CLI tests of `tessera verify` (registered in tests/CMakeLists.txt as cli_verify_<case>); each
# prints what the test's PASS_REGULAR_EXPRESSION checks.
# Usage: verify.sh CASE TESSERA VNNCOMP_DIR WORK_DIR [NOT_A_PROPERTY_FILE]
#   unsat_results_file          unsat on stdout and in the --results file
#   malformed_property_exit2    a file that is not VNN-LIB: an error naming file:line, exit 2
#   bad_config_exit2            an unknown key in --config: an error naming it, exit 2
#   timeout_results_file        --timeout 2 on a hard instance: `timeout`, exit 0, results file
case_name=$1
tessera=$2
vnncomp=$3
work=$4
case $case_name in
  unsat_results_file)
    "$tessera" verify "$vnncomp/test/test_unsat.onnx" "$vnncomp/test/test_prop.vnnlib" --timeout 30 \
      --results "$work/verify_unsat.txt" && cat "$work/verify_unsat.txt" ;;
  malformed_property_exit2)
    "$tessera" verify "$vnncomp/test/test_sat.onnx" "$5" 2>&1; echo rc=$? ;;
  bad_config_exit2)
    echo 'bab: {batch: 3}' > "$work/bad.yaml"
    "$tessera" verify "$vnncomp/test/test_sat.onnx" "$vnncomp/test/test_prop.vnnlib" \
      --config "$work/bad.yaml" 2>&1; echo rc=$? ;;
  timeout_results_file)
    "$tessera" verify "$vnncomp/acasxu/ACASXU_run2a_3_3_batch_2000.onnx" "$vnncomp/acasxu/prop_9.vnnlib" \
      --timeout 2 --quiet --results "$work/verify_timeout.txt"
    echo rc=$?
    cat "$work/verify_timeout.txt" ;;
  *)
    echo "verify.sh: unknown case '$case_name'" >&2; exit 2 ;;
esac
