#!/usr/bin/python3
"""Where a command's threads run beside one busy process (issue #27, CG on a busy machine).

    bench/thread_placement.py [--interval SECONDS] [--no-busy] -- COMMAND...

Starts one busy process (`while :; do :; done`) unless --no-busy, then COMMAND, and every
--interval (default 0.002 s) reads /proc/PID/task/*/stat of COMMAND's process: which of its
threads are runnable ("R") and on which CPU, and the busy process's state and CPU. Prints one
JSON line: the wall seconds, the number of samples, and the count of each placement, e.g.
"runnable 0,0 | busy R1" (two runnable threads on CPU 0, the busy process running on CPU 1).
The sampler is a process of its own on the same cores: its wall seconds are not a figure.
COMMAND should be `tessera-main` (not the launcher, whose child would not be sampled).
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import time


def task_state(path):
    """(state, cpu) of one task from its stat line (fields after the command's closing parenthesis)."""
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return fields[0], fields[36]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--interval", type=float, default=0.002)
    ap.add_argument("--no-busy", action="store_true")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no command")
    busy = None if args.no_busy else subprocess.Popen(["bash", "-c", "while :; do :; done"])
    try:
        if busy:
            time.sleep(1)
        env = dict(os.environ, GLOG_minloglevel="2")
        start = time.time()
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
        counts = collections.Counter()
        while proc.poll() is None:
            try:
                cpus = []
                for tid in os.listdir(f"/proc/{proc.pid}/task"):
                    state, cpu = task_state(f"/proc/{proc.pid}/task/{tid}/stat")
                    if state == "R":
                        cpus.append(cpu)
                key = "runnable " + ",".join(sorted(cpus))
                if busy:
                    state, cpu = task_state(f"/proc/{busy.pid}/stat")
                    key += f" | busy {state}{cpu}"
                counts[key] += 1
            except (FileNotFoundError, ProcessLookupError, IndexError):
                pass  # a thread or the process ended between the listing and the read
            time.sleep(args.interval)
        wall = time.time() - start
    finally:
        if busy:
            busy.kill()
            busy.wait()
    print(json.dumps({"command": command, "exit": proc.returncode, "wall_s": round(wall, 3),
                      "samples": sum(counts.values()), "placements": dict(counts.most_common())}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
