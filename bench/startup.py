#!/usr/bin/python3
"""Start-up of `tessera verify`: where the time goes from exec to the verdict, one thread.

    bench/startup.py [--bin DIR]... [--repeats N] [--instance ONNX:VNNLIB]... [--data DIR] [--server]

Each DIR holds a `tessera` launcher and its `tessera-main` (default: build/); several DIRs are
measured in the same run, round by round, so their figures share the machine's load. Besides
them, floors built here with the system compiler: an empty C `main` (exec alone), one linked
against LibTorch only (libtorch_cpu, libc10) and one linked against exactly the libraries
`tessera-main` needs (readelf NEEDED), so the loader, the libraries' static initialisers and
their exit handlers cost what they cost in tessera, without any of tessera's own work.

Per program and instance, medians over the repeats of: wall seconds from fork to the first
progress line on standard error (`ready`: libraries loaded, command line, ONNX and VNN-LIB
parsed, graph built, threads set up), to the verdict on standard output (`verdict`: the
first attack or bound decided it) and to the process's end (`exit`), and the CPU seconds
(user + system) of the whole process. One JSON line per (program, case), then a summary
line. Load average before and after is in the summary; figures above load ~2 (2 cores) are
indicative only, CPU seconds less so.

With --server, the first DIR's `tessera serve` is started once (its start-up in the summary)
and every instance is also run through the launcher on it (case "... (served)"): its wall
times are the launcher's from exec to end; its CPU seconds are not measurable from here (the
command runs in the server's process tree) and are left out.
"""
import argparse
import json
import os
import selectors
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_INSTANCES = [  # decided at once in every recorded ACAS Xu run
    "ACASXU_run2a_2_3_batch_2000.onnx:prop_2.vnnlib",  # sat by the first attack
    "ACASXU_run2a_4_5_batch_2000.onnx:prop_3.vnnlib",  # unsat by the first bound (CROWN)
    "ACASXU_run2a_1_1_batch_2000.onnx:prop_1.vnnlib",  # unsat after a short search (53 domains)
]


def timed(cmd, env):
    """Runs cmd; returns wall seconds to the first stderr line, to the first stdout line, to
    the end, the CPU seconds and the exit status."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    first = {"out": None, "err": None}
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ, "out")
    sel.register(p.stderr, selectors.EVENT_READ, "err")
    open_pipes = 2
    while open_pipes:
        for key, _ in sel.select():
            chunk = os.read(key.fileobj.fileno(), 65536)
            if not chunk:
                sel.unregister(key.fileobj)
                open_pipes -= 1
            elif first[key.data] is None:
                first[key.data] = time.perf_counter() - t0
    _, status, ru = os.wait4(p.pid, 0)
    end = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return first["err"], first["out"], end, ru.ru_utime + ru.ru_stime, p.returncode


def needed_libraries(program):
    """Full paths of the libraries `program` names in its dynamic section (NEEDED), in order."""
    names = [line.split("[")[1].rstrip("]")
             for line in subprocess.run(["readelf", "-d", program], capture_output=True, text=True).stdout.splitlines()
             if "(NEEDED)" in line]
    where = {}
    for line in subprocess.run(["ldd", program], capture_output=True, text=True).stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>":
            where[parts[0]] = parts[2]
    return [where[n] for n in names if n in where]  # the loader itself is not linked by name


def build_floors(tmp, main_program):
    """Empty C programs: alone, against LibTorch, against tessera-main's libraries."""
    src = os.path.join(tmp, "empty.c")
    with open(src, "w") as f:
        f.write("int main(void) { return 0; }\n")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return {}
    libs = needed_libraries(main_program)
    torch = [l for l in libs if "libtorch_cpu" in l or "libc10" in l]
    floors = {}
    for name, extra in (("floor_exec", []), ("floor_libtorch", torch), ("floor_same_libs", libs)):
        out = os.path.join(tmp, name)
        r = subprocess.run([cc, "-O2", src, "-o", out, "-Wl,--no-as-needed"] + extra, capture_output=True, text=True)
        if r.returncode == 0:
            floors[name] = out
        else:
            print(f"# could not build {name}: {r.stderr.strip()[:200]}", file=sys.stderr)
    return floors


def median(values):
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 4) if values else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", action="append", help="folder with tessera and tessera-main (default build/)")
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--instance", action="append", help="ONNX:VNNLIB under --data")
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data", "vnncomp2021", "acasxu"))
    ap.add_argument("--server", action="store_true", help="also run every instance on a `tessera serve`")
    args = ap.parse_args()
    bins = args.bin or [os.path.join(ROOT, "build")]
    instances = args.instance or DEFAULT_INSTANCES
    env = dict(os.environ, GLOG_minloglevel="2")
    load_before = os.getloadavg()[0]
    runs = {}  # (program, case) -> list of (ready, verdict, exit, cpu)
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        served_env, server, server_start = None, None, None
        if args.server:
            sock = os.path.join(tmp, "s")
            t0 = time.perf_counter()
            server = subprocess.Popen([os.path.join(bins[0], "tessera"), "serve", "--socket", sock], env=env,
                                      stderr=subprocess.DEVNULL)
            while not (os.path.exists(sock) and os.path.exists(sock + ".passive")) and server.poll() is None:
                time.sleep(0.01)
            server_start = round(time.perf_counter() - t0, 3)
            served_env = dict(env, TESSERA_SERVER=sock)
        for name, path in build_floors(tmp, os.path.join(bins[0], "tessera-main")).items():
            cases.append((name, "-", [path]))
        for b in bins:
            cases.append((b, "--version (tessera-main)", [os.path.join(b, "tessera-main"), "--version"]))
            cases.append((b, "--version (launcher)", [os.path.join(b, "tessera"), "--version"]))
            for inst in instances:
                onnx, vnnlib = inst.split(":")
                cmd = [os.path.join(b, "tessera"), "--threads", "1", "verify", os.path.join(args.data, onnx),
                       os.path.join(args.data, vnnlib), "--timeout", "116"]
                cases.append((b, inst, cmd))
                if served_env is not None and b == bins[0]:
                    cases.append((b, inst + " (served)", cmd))
        for _ in range(args.repeats):  # round by round: every case sees the same load
            for program, case, cmd in cases:
                served = case.endswith("(served)")
                err, out, end, cpu, rc = timed(cmd, served_env if served else env)
                if served:
                    cpu = None
                if rc != 0:
                    print(f"# {' '.join(cmd)} exited {rc}", file=sys.stderr)
                runs.setdefault((program, case), []).append((err, out, end, cpu))
        load_after = os.getloadavg()[0]
        if server is not None:
            server.terminate()
            server.wait()
        for program, case, _ in cases:
            r = runs[(program, case)]
            row = {"program": os.path.basename(program) if program.startswith(tmp) else program, "case": case,
                   "repeats": len(r), "ready_s": median([x[0] for x in r]), "verdict_s": median([x[1] for x in r]),
                   "exit_s": median([x[2] for x in r]), "cpu_s": median([x[3] for x in r])}
            print(json.dumps(row))
    print(json.dumps({"summary": True, "repeats": args.repeats, "threads": 1, "server_start_s": server_start,
                      "load_before": load_before,
                      "load_after": load_after, "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}))


if __name__ == "__main__":
    main()
