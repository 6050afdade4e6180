#!/bin/sh
# `tessera serve`: the launcher runs a command on the server named by TESSERA_SERVER when its
# load-time environment matches, with the caller's streams, folder and exit status; it
# starts its own process when no server answers or the environment differs; a launcher
# that is killed takes its command with it; a second server on the same socket is refused;
# a stopped server removes its sockets and its passive twin.
# Usage: serve.sh TESSERA VNNCOMP_DIR WORK_DIR
tessera=$1
vnncomp=$2
work=$3/serve_test
. "$(dirname "$0")/checks.sh"
rm -rf "$work" && mkdir -p "$work"
# libgomp's default with tessera's own choice of passive threads, as for a user who set neither
unset OMP_WAIT_POLICY GOMP_SPINCOUNT TESSERA_OMP_WAIT_DEFAULT
sock=$work/s.sock
out=$work/out
log=$work/log
server=""
trap '[ -n "$server" ] && kill $server 2>/dev/null' EXIT

"$tessera" serve --socket "$sock" 2>"$work/server.log" &
server=$!
for i in $(seq 1 300); do [ -S "$sock" ] && [ -S "$sock.passive" ] && break; sleep 0.1; done
check server_listens test -S "$sock"
check passive_twin_listens test -S "$sock.passive"
twin=$(pgrep -P "$server" -f -- --twin)
check twin_is_the_servers_child test -n "$twin"

# a command on the server: `info` says so (the twin answers when the machine is busy)
TESSERA_SERVER=$sock "$tessera" info >"$out" 2>"$log"
check info_exit_0 test $? -eq 0
check info_served grep -q "served_by: \"the server at $sock" "$out"

# the same verdicts and files as a process of its own, relative paths from the caller's folder
for case in test_unsat test_sat; do
  (cd "$work" && TESSERA_SERVER=$sock "$tessera" verify "$vnncomp/test/$case.onnx" "$vnncomp/test/test_prop.vnnlib" \
    --timeout 30 --results served_$case.txt >"$out" 2>"$log")
  served=$?
  "$tessera" verify "$vnncomp/test/$case.onnx" "$vnncomp/test/test_prop.vnnlib" --timeout 30 \
    --results "$work/own_$case.txt" >"$out.own" 2>/dev/null
  own=$?
  check ${case}_same_exit_code test $served -eq $own
  check ${case}_same_verdict test "$(tail -n 1 "$out")" = "$(tail -n 1 "$out.own")"
  check ${case}_results_in_callers_folder test "$(head -n 1 "$work/served_$case.txt")" = "$(head -n 1 "$work/own_$case.txt")"
  check ${case}_progress_on_callers_stderr grep -q "(by" "$log"
done

# bad input: exit code 2 and the message on the caller's standard error
TESSERA_SERVER=$sock "$tessera" verify "$work/missing.onnx" "$vnncomp/test/test_prop.vnnlib" >"$out" 2>"$log"
check bad_input_exit_2 test $? -eq 2
check bad_input_message grep -q "missing.onnx" "$log"

# another load-time environment, or no server: a process of its own
OMP_NUM_THREADS=3 TESSERA_SERVER=$sock "$tessera" info >"$out" 2>"$log"
check other_environment_runs_alone grep -q "served_by: \"none" "$out"
TESSERA_SERVER=$work/nobody.sock "$tessera" info >"$out" 2>"$log"
check no_server_exit_0 test $? -eq 0
check no_server_runs_alone grep -q "served_by: \"none" "$out"

# a server that does not answer (stopped): after 10 s without a greeting, a process of its own
kill -STOP "$server" "$twin"
TESSERA_SERVER=$sock "$tessera" info >"$out" 2>"$log"
check stopped_server_exit_0 test $? -eq 0
check stopped_server_runs_alone grep -q "served_by: \"none" "$out"
kill -CONT "$server" "$twin"

# one server per socket
"$tessera" serve --socket "$sock" >"$out" 2>"$log"
check second_server_exit_2 test $? -eq 2
check second_server_message grep -q "already listens" "$log"

# a launcher killed while its command runs: the command ends too (only the twin stays a child)
TESSERA_SERVER=$sock "$tessera" --threads 1 solve --poisson2d 1500 --method cg --rtol 1e-14 >/dev/null 2>&1 &
launcher=$!
sleep 2
children() { echo $(($(pgrep -P "$server" | wc -l) + $(pgrep -P "$twin" | wc -l))); }  # the twin, handlers
check command_running test "$(children)" -ge 2
kill -TERM $launcher
wait $launcher 2>/dev/null
for i in $(seq 1 50); do [ "$(children)" -le 1 ] && break; sleep 0.1; done
check command_ended_with_its_launcher test "$(children)" -le 1

# stopping the server removes its sockets and its twin
kill -TERM $server
wait $server
check server_stopped_exit_0 test $? -eq 0
server=""
# gone, or a zombie that nobody has reaped yet (the server that started it has ended)
twin_gone() { [ ! -d "/proc/$twin" ] || grep -q '^[0-9]* ([^)]*) Z' "/proc/$twin/stat" 2>/dev/null; }
for i in $(seq 1 100); do twin_gone && [ ! -e "$sock.passive" ] && break; sleep 0.1; done
check sockets_removed test ! -e "$sock" -a ! -e "$sock.passive"
check twin_stopped twin_gone

# --idle-exit: a server with nothing to do ends by itself and removes its sockets (its idle
# time starts when it listens: the twin, which loads LibTorch first, may come up after it
# on a busy machine, so the listening check is the server's own socket)
idle=$work/idle.sock
"$tessera" serve --socket "$idle" --idle-exit 3 2>/dev/null &
idle_server=$!
for i in $(seq 1 300); do [ -S "$idle" ] && break; sleep 0.1; done
check idle_server_listens test -S "$idle"
for i in $(seq 1 300); do [ -d "/proc/$idle_server" ] || break; sleep 0.1; done
wait $idle_server 2>/dev/null
check idle_server_ended test ! -d "/proc/$idle_server" -a ! -e "$idle"

# the VNN-COMP scripts: prepare_instance starts a server, run_instance's verdict comes from it
scripts=$(cd "$(dirname "$0")/../../vnncomp_scripts" && pwd)
export TESSERA_BIN=$tessera TESSERA_SERVER_SOCKET=$work/vnncomp.sock
bash "$scripts/prepare_instance.sh" v1 test "$vnncomp/test/test_sat.onnx" "$vnncomp/test/test_prop.vnnlib" >"$out" 2>&1
check prepare_exit_0 test $? -eq 0
check prepare_started_a_server test -S "$work/vnncomp.sock"
bash "$scripts/run_instance.sh" v1 test "$vnncomp/test/test_sat.onnx" "$vnncomp/test/test_prop.vnnlib" \
  "$work/vnncomp_result.txt" 30 >"$out" 2>&1
check run_instance_sat test "$(head -n 1 "$work/vnncomp_result.txt")" = sat
TESSERA_SERVER=$work/vnncomp.sock "$tessera" info >"$out" 2>&1
check vnncomp_server_serves grep -q "served_by: \"the server at $work/vnncomp.sock" "$out"
pkill -TERM -f -- "--socket $work/vnncomp.sock" 2>/dev/null

checks_done
