#!/usr/bin/env python3
"""Compile and run the MPI test programs of tests/mpi against an MPI.

Every tests/mpi/*.list file names the runs, one program per line:

    <program> <rank counts> [timeout=SECONDS] [env=NAME=VALUE ...] [expect=N]
              [direct] [name=ALIAS]

    p2p_wildcard 1,2,4,8 timeout=60 env=_YAMPI_RSIZE=1024

* program      tests/mpi/<program>.c, compiled with the chosen mpicc, or
               <program>.f (fixed form, mpif77) or <program>.f90 (mpif90)
* rank counts  comma-separated; one run per count
* timeout=S    per-run limit (default 20 s); on expiry the whole process
               group (and anything else the run started) is killed: TIMEOUT
* env=N=V      extra environment for the run (repeatable)
* expect=N     expected exit status (default 0); expect=nonzero accepts any
               non-zero status
* direct       run ./program without mpirun (singleton MPI_Init)
* name=ALIAS   name of the run when one program is listed twice (e.g. with a
               different env); default: the program name
* cluster-expect=N  expected exit status when split over clusters (--clusters),
               where it differs (e.g. nonzero when which cluster reports
               which failure first is a race)
* homogeneous  the program assumes every process has the same data
               representation (e.g. it receives typed data as MPI_BYTE and
               reads it): not run split over clusters (--clusters)
* clusters     the run means something only split over clusters (e.g. it
               forces the wide-area collectives): run with --clusters only
* plain        only the listed runs: ctest registers no variant (thread,
               vendor, nounix, clusters) of the entry (a matrix of forced
               settings whose variants the default entry covers)

--clusters SPLIT runs every run as a multi-cluster job (impi-server and one
mpirun -client per cluster, through tests/impi/multicluster, whose top says
what SPLIT means: 2, 2u, 3, ...); direct and homogeneous runs and runs with
fewer ranks than clusters are left out.

A run passes when its exit status is the expected one and, for expect=0, no
output line starts with "FAIL:" (so a launcher that loses a rank's exit
status still cannot turn a failure into a pass).  After every run, processes
that the run left behind are found (they carry a marker in their
environment, and the runner is their subreaper), killed and reported.

--env NAME=VALUE adds environment to every run (before the list's env=,
which wins); --env NAME@N=VALUE only to runs with N ranks, e.g. a fake
IMPI client split per rank count:
    run_mpi_tests.py --env GRIDMPI_IMPI_FAKE_CLIENTS@2=1,1 \
                     --env GRIDMPI_IMPI_FAKE_CLIENTS@4=2,2 --np 2,4

Examples:
    run_mpi_tests.py --impl openmpi
    run_mpi_tests.py --impl mpich -k p2p_ --np 2,4
    run_mpi_tests.py --mpicc build/debug/bin/mpicc --mpirun build/debug/bin/mpirun
"""

import argparse
import ctypes
import fcntl
import glob
import hashlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
# The mpcxx layer's headers (<program>.cpp are compiled against them).
MPCXX_INCLUDE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "mpcxx", "include")
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
DEFAULT_TIMEOUT = 20.0
MARKER = "GRIDMPI_MPITEST_RUN"

IMPLS = {
    "openmpi": ("mpicc.openmpi", "mpirun.openmpi", "--oversubscribe --allow-run-as-root"),
    "mpich": ("mpicc.mpich", "mpirun.mpich", ""),
}
# Their C++ wrappers, for <program>.cpp.
CXX_IMPLS = {"openmpi": "mpicxx.openmpi", "mpich": "mpicxx.mpich"}
# Fortran wrappers (mpif77, mpif90) of the same implementations.
FORTRAN_IMPLS = {
    "openmpi": ("mpif77.openmpi", "mpif90.openmpi"),
    "mpich": ("mpif77.mpich", "mpif90.mpich"),
}


class ListError(Exception):
    pass


class Entry:
    def __init__(self, program, counts, timeout, env, expect, direct, name, where, homogeneous=False):
        self.homogeneous = homogeneous
        self.program = program
        self.counts = counts
        self.timeout = timeout
        self.env = env
        self.expect = expect
        self.direct = direct
        self.name = name
        self.where = where


def parse_list(path):
    entries = []
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            where = "%s:%d" % (os.path.basename(path), lineno)
            fields = line.split()
            if len(fields) < 2:
                raise ListError("%s: expected '<program> <rank counts> [options]', got %r" % (where, line))
            program = fields[0]
            try:
                counts = [int(c) for c in fields[1].split(",") if c]
            except ValueError:
                raise ListError("%s: bad rank counts %r" % (where, fields[1]))
            if not counts or any(c < 1 for c in counts):
                raise ListError("%s: bad rank counts %r" % (where, fields[1]))
            timeout, env, expect, direct, name = DEFAULT_TIMEOUT, {}, 0, False, program
            homogeneous = False
            clusters_only = False
            cluster_expect = None
            for opt in fields[2:]:
                if opt == "direct":
                    direct = True
                elif opt == "homogeneous":
                    homogeneous = True
                elif opt == "clusters":
                    clusters_only = True
                elif opt == "plain":
                    pass  # read by tests/mpi/CMakeLists.txt
                elif opt.startswith("cluster-expect="):
                    val = opt[len("cluster-expect="):]
                    cluster_expect = "nonzero" if val == "nonzero" else int(val)
                elif opt.startswith("timeout="):
                    timeout = float(opt[len("timeout="):])
                elif opt.startswith("env="):
                    kv = opt[len("env="):]
                    if "=" not in kv:
                        raise ListError("%s: bad env option %r (want env=NAME=VALUE)" % (where, opt))
                    k, v = kv.split("=", 1)
                    env[k] = v
                elif opt.startswith("expect="):
                    val = opt[len("expect="):]
                    expect = "nonzero" if val == "nonzero" else int(val)
                elif opt.startswith("name="):
                    name = opt[len("name="):]
                else:
                    raise ListError("%s: unknown option %r" % (where, opt))
            if direct and counts != [1]:
                raise ListError("%s: a 'direct' run has exactly one rank" % where)
            entries.append(Entry(program, counts, timeout, env, expect, direct, name, where, homogeneous))
            entries[-1].cluster_expect = cluster_expect
            entries[-1].clusters_only = clusters_only
    return entries


def find_default_build():
    """Our build tree: $GRIDMPI_BUILD_DIR, else the newest build/*/bin/mpirun."""
    env = os.environ.get("GRIDMPI_BUILD_DIR")
    if env:
        return env
    cands = [os.path.dirname(os.path.dirname(p)) for p in glob.glob(os.path.join(REPO, "build", "*", "bin", "mpirun"))]
    if not cands:
        return os.path.join(REPO, "build", "debug")
    return max(cands, key=lambda d: os.path.getmtime(os.path.join(d, "bin", "mpirun")))


# ---------------------------------------------------------------- processes

_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    """Orphans of our runs are re-parented to us, so we can find and reap them."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def proc_stat(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            data = f.read().decode("latin-1")
    except OSError:
        return None
    rest = data[data.rfind(")") + 2:].split()
    return rest[0], int(rest[1])  # state, ppid


def marked_processes(token):
    """Pids whose environment carries MARKER=token."""
    needle = ("%s=%s" % (MARKER, token)).encode()
    found = []
    me = os.getpid()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        pid = int(d)
        if pid == me:
            continue
        try:
            with open("/proc/%d/environ" % pid, "rb") as f:
                envs = f.read().split(b"\0")
        except OSError:
            continue
        if needle in envs:
            st = proc_stat(pid)
            if st and st[0] != "Z":
                found.append(pid)
    return found


_live_children = set()
_live_lock = threading.Lock()


def reap_orphans():
    """Reap zombies re-parented to us (never one that a Popen still owns)."""
    me = os.getpid()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        pid = int(d)
        st = proc_stat(pid)
        if not st or st[1] != me or st[0] != "Z":
            continue
        with _live_lock:
            if pid in _live_children:
                continue
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def kill_leftovers(token, grace):
    """Wait up to `grace` seconds for marked processes to go, then kill them.
    Returns descriptions of the processes that had to be killed."""
    deadline = time.monotonic() + grace
    while True:
        left = marked_processes(token)
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    killed = []
    for pid in left:
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("latin-1").strip()
        except OSError:
            cmd = "?"
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append("%d (%s)" % (pid, cmd[:80]))
        except ProcessLookupError:
            pass
    if killed:
        time.sleep(0.2)
    reap_orphans()
    return killed


def dump_stacks(token, log_path):
    """Before a timed-out run is killed: every marked process's threads'
    stacks (gdb), in full to LOG.stacks and one line per thread appended to
    the log, so that a hang seen once (e.g. in CI) shows where it waited."""
    gdb = shutil.which("gdb")
    pids = marked_processes(token)
    lines = []
    with open(log_path + ".stacks", "w") as full:
        if not gdb:
            lines.append("stacks: gdb not found (scripts/install-deps installs it)")
        for pid in pids[:24] if gdb else []:
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    name = os.path.basename(f.read().split(b"\0")[0].decode("latin-1")) or "?"
            except OSError:
                continue
            try:
                out = subprocess.run([gdb, "-batch", "-nx", "-p", str(pid), "-ex", "set pagination off",
                                      "-ex", "thread apply all bt 40"], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30).stdout
            except (subprocess.TimeoutExpired, OSError) as ex:
                lines.append("stacks: pid %d (%s): gdb failed: %s" % (pid, name, ex))
                continue
            text = out.decode("utf-8", "replace")
            full.write("==== pid %d (%s)\n%s\n" % (pid, name, text))
            thread, frames = None, []

            def flush():
                if thread is not None:
                    lines.append("stacks: %d %s %s: %s" % (pid, name, thread, " < ".join(frames[:10])))

            for l in text.replace("(anonymous namespace)", "{anon}").splitlines():
                m = re.match(r"Thread (\d+) ", l)
                if m:
                    flush()
                    thread, frames = "t" + m.group(1), []
                    continue
                m = re.match(r"#\d+\s+(?:0x[0-9a-f]+ in )?([^\s(]+)", l)
                if m and thread is not None:
                    frames.append(m.group(1))
            flush()
    if lines:
        lines.append("(full stacks in %s.stacks)" % os.path.basename(log_path))
    return lines


def run_with_timeout(cmd, env, cwd, timeout, log_path, token=None):
    """Runs cmd in its own session/process group; returns (status, timed_out, seconds).
    status is the exit code, or -signal when killed by a signal.  On a
    timeout the stacks of the processes marked with token are dumped first."""
    start = time.monotonic()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        with _live_lock:
            _live_children.add(proc.pid)
        timed_out = False
        stacks = []
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            if token:
                try:
                    stacks = dump_stacks(token, log_path)
                except Exception as ex:  # diagnostics must not change the verdict
                    stacks = ["stacks: %r" % ex]
            for sig, pause in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    pass
                try:
                    proc.wait(timeout=pause)
                    break
                except subprocess.TimeoutExpired:
                    continue
        finally:
            if proc.returncode is None:
                proc.kill()
                proc.wait()
            with _live_lock:
                _live_children.discard(proc.pid)
            # Anything still in the group goes too (a rank that outlived mpirun).
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    if stacks:  # after the kill: the job's own writes to the log are over
        with open(log_path, "a") as log:
            log.write("\n".join(stacks) + "\n")
    return proc.returncode, timed_out, time.monotonic() - start


# ---------------------------------------------------------------- compiling

class Compiler:
    def __init__(self, mpicc, cflags, work_dir, source_dir, fortran=None, cxx=None):
        self.source_dir = source_dir
        self.mpicc = mpicc
        self.cflags = cflags
        # (mpicxx, cxxflags) for <program>.cpp
        self.cxx = cxx
        # {".f": (mpif77, fflags), ".f90": (mpif90, fflags)}
        self.fortran = fortran or {}
        self.work_dir = work_dir
        self.results = {}
        self.shown = set()
        self.lock = threading.Lock()

    def build(self, program):
        """Returns (binary path or None, error text). Safe across processes."""
        with self.lock:
            if program in self.results:
                return self.results[program]
        src = os.path.join(self.source_dir, program + ".c")
        compiler, flags = self.mpicc, self.cflags
        for ext, (fc, fflags) in self.fortran.items():
            if not os.path.exists(src) and os.path.exists(os.path.join(self.source_dir, program + ext)):
                src, compiler, flags = os.path.join(self.source_dir, program + ext), fc, fflags
        if not os.path.exists(src) and self.cxx and os.path.exists(os.path.join(self.source_dir, program + ".cpp")):
            src, (compiler, flags) = os.path.join(self.source_dir, program + ".cpp"), self.cxx
        exe = os.path.join(self.work_dir, program)
        if not os.path.exists(src):
            res = (None, "no source file %s (nor .f, .f90)" % src)
        else:
            cmd = shlex.split(compiler) + flags + ["-I", self.source_dir, "-I", HERE, "-o", exe + ".tmp",
                                                   src, "-lm"]
            stamp_text = " ".join(cmd)
            deps = [src] + glob.glob(os.path.join(self.source_dir, "*.h")) + glob.glob(os.path.join(HERE, "*.h"))
            if src.endswith(".cpp"):
                deps += glob.glob(os.path.join(MPCXX_INCLUDE, "*.hpp")) + \
                    glob.glob(os.path.join(MPCXX_INCLUDE, "mpcxx", "*.hpp"))
            # The MPI's own headers (next to its wrapper, as in our build
            # tree): a changed mpi.h must rebuild every program.
            word = shlex.split(compiler)[0]
            wrapper = shutil.which(word) or word
            include = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(wrapper))), "include")
            deps += [h for h in (os.path.join(include, n) for n in ("mpi.h", "mpif.h")) if os.path.exists(h)]
            lock_path = exe + ".lock"
            with open(lock_path, "w") as lk:
                fcntl.flock(lk, fcntl.LOCK_EX)
                try:
                    res = self._build_locked(cmd, stamp_text, deps, exe)
                finally:
                    fcntl.flock(lk, fcntl.LOCK_UN)
        with self.lock:
            self.results[program] = res
        return res

    def _build_locked(self, cmd, stamp_text, deps, exe):
        stamp = exe + ".cmd"
        try:
            if os.path.exists(exe) and open(stamp).read() == stamp_text:
                t = os.path.getmtime(exe)
                if all(os.path.getmtime(d) <= t for d in deps):
                    return exe, ""
        except OSError:
            pass
        try:
            # In the work directory: gfortran writes module files (.mod) into its cwd.
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300,
                               cwd=self.work_dir)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, "%s: %s" % (" ".join(cmd), e)
        out = p.stdout.decode("utf-8", "replace")
        if p.returncode != 0:
            return None, "%s\n%s" % (" ".join(cmd), out)
        os.replace(exe + ".tmp", exe)
        with open(stamp, "w") as f:
            f.write(stamp_text)
        return exe, out


# ---------------------------------------------------------------- running

class Run:
    def __init__(self, entry, nprocs):
        self.entry = entry
        self.nprocs = nprocs
        self.id = "%s np=%d" % (entry.name, nprocs)
        self.verdict = None
        self.detail = ""
        self.seconds = 0.0
        self.log = ""


def execute(run, args, compiler):
    e = run.entry
    exe, text = compiler.build(e.program)
    if exe is None:
        run.verdict, run.detail = "COMPILE-FAIL", "compilation failed"
        with compiler.lock:  # show the compiler output once per program
            if e.program not in compiler.shown:
                compiler.shown.add(e.program)
                run.log = text
            else:
                run.detail += " (output above)"
        return run
    token = uuid.uuid4().hex
    env = dict(os.environ)
    env.update(args.global_env.get(None, {}))
    env.update(args.global_env.get(run.nprocs, {}))
    env.update(e.env)
    # The run's own variables also reach ranks that mpirun starts on other
    # hosts (tests/mpi/two_hosts_suite.sh): ssh passes only gridmpi's.
    names = sorted(set(e.env) | set(args.global_env.get(None, {})) | set(args.global_env.get(run.nprocs, {})))
    if names:
        listed = [x for x in re.split(r"[,:]", env.get("_YAMPI_MPIRUN_ENVSLIST", "")) if x]
        env["_YAMPI_MPIRUN_ENVSLIST"] = ",".join(listed + [x for x in names if x not in listed])
    env[MARKER] = token
    if os.geteuid() == 0:
        # Open MPI refuses root without these (needed for singleton runs,
        # where no --allow-run-as-root can be given); ignored by others.
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    if e.direct:
        cmd = [exe]
    else:
        cmd = shlex.split(args.mpirun) + shlex.split(args.mpirun_args) + [args.np_flag, str(run.nprocs), exe]
    suffix = ".c%s" % args.clusters if args.clusters else ""
    # Entries differing only in mpirun flags (-vendor, -progress), --env or
    # --cluster-args run at the same time under ctest -j: each needs a log
    # of its own (a shared one was truncated under a running job).
    variant = " ".join([args.mpirun_args.strip()] + args.env + args.cluster_args).strip()
    if variant:
        suffix += "." + re.sub(r"[^A-Za-z0-9]+", "_", variant).strip("_")[:80]
    log_path = os.path.join(args.work_dir, "%s.np%d%s.log" % (e.name, run.nprocs, suffix))
    timeout = e.timeout * args.timeout_scale
    status, timed_out, run.seconds = run_with_timeout(cmd, env, args.work_dir, timeout, log_path, token)
    killed = kill_leftovers(token, grace=2.0)
    with open(log_path, "rb") as f:
        run.log = f.read().decode("utf-8", "replace")
    fail_lines = [l for l in run.log.splitlines() if l.startswith("FAIL:")]
    expect = e.expect
    if args.clusters and getattr(e, "cluster_expect", None) is not None:
        expect = e.cluster_expect
    if timed_out:
        run.verdict, run.detail = "TIMEOUT", "no exit after %.0f s" % timeout
    elif expect == "nonzero":
        ok = status != 0
        run.verdict = "PASS" if ok else "FAIL"
        run.detail = "exit %d (expected non-zero)" % status
    else:
        ok = status == expect and (expect != 0 or not fail_lines)
        run.verdict = "PASS" if ok else "FAIL"
        if status < 0:
            run.detail = "killed by signal %d" % -status
        elif status != expect:
            run.detail = "exit %d, expected %d" % (status, expect)
        elif fail_lines and expect == 0:
            run.detail = "exit 0 but output has FAIL lines"
        else:
            run.detail = "exit %d" % status
    if fail_lines and run.verdict != "PASS":
        run.detail += "; " + fail_lines[0][len("FAIL: "):][:160]
    if killed:
        run.detail += "; killed %d leftover process(es): %s" % (len(killed), ", ".join(killed[:4]))
        if run.verdict == "PASS":
            run.verdict = "FAIL"
    run.cmd = " ".join(shlex.quote(c) for c in cmd)
    return run


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impl", choices=sorted(IMPLS) + ["gridmpi"],
                   help="preset mpicc/mpirun/mpirun-args for Debian's Open MPI or MPICH, or our build tree")
    p.add_argument("--build-dir", help="our build tree (default: $GRIDMPI_BUILD_DIR or the newest build/*/)")
    p.add_argument("--mpicc", help="compiler wrapper (default: <build-dir>/bin/mpicc)")
    p.add_argument("--mpirun", help="launcher (default: <build-dir>/bin/mpirun)")
    p.add_argument("--mpif77", help="Fortran 77 wrapper for <program>.f (default: mpif77 next to mpicc)")
    p.add_argument("--mpif90", help="Fortran 90 wrapper for <program>.f90 (default: mpif90 next to mpicc)")
    p.add_argument("--mpicxx", help="C++ wrapper for <program>.cpp (default: mpic++ next to mpicc)")
    p.add_argument("--cxxflags", default="-g -O1 -Wall -std=c++20 -pthread",
                   help="flags for the C++ wrapper (the mpcxx headers' directory is added)")
    # gfortran >= 10 rejects a choice buffer passed with two types in one file
    # unless told otherwise (Open MPI's wrappers do not say it; ours and MPICH's do).
    p.add_argument("--fflags", default="-g -O1 -fallow-argument-mismatch",
                   help="flags for mpif77/mpif90 (default '-g -O1 -fallow-argument-mismatch')")
    p.add_argument("--mpirun-args", default=None, help="extra launcher arguments, one shell-quoted string")
    p.add_argument("--np-flag", default="-np", help="launcher flag for the process count (default -np)")
    p.add_argument("--cflags", default="-g -O1 -Wall -pthread", help="flags for mpicc (default '-g -O1 -Wall -pthread')")
    p.add_argument("--work-dir", help="where binaries and logs go (default /tmp/gridmpi-mpitests-<uid>/<hash of mpicc>)")
    p.add_argument("--lists", nargs="*", help="list files (default <source-dir>/*.list)")
    p.add_argument("--source-dir", default=HERE, help="where <program>.c and the lists are (default: this directory)")
    p.add_argument("-k", dest="pattern", action="append",
                   help="only runs whose 'name np=N' matches this regular expression (repeatable: any)")
    p.add_argument("--name", action="append", help="only this test name, exactly (repeatable)")
    p.add_argument("--np", help="only these rank counts, e.g. 1,2")
    p.add_argument("--largest-up-to", type=int, metavar="N",
                   help="each entry once, at its largest rank count up to N (its smallest when none is); "
                        "direct entries are left out")
    p.add_argument("-j", type=int, default=1, help="parallel runs (default 1)")
    p.add_argument("--timeout-scale", type=float, default=float(os.environ.get("GRIDMPI_TEST_TIMEOUT_SCALE", "1")),
                   help="multiply every timeout (default 1, or $GRIDMPI_TEST_TIMEOUT_SCALE)")
    p.add_argument("--env", action="append", default=[], metavar="NAME[@N]=VALUE",
                   help="extra environment for every run (repeatable; NAME@N=VALUE: only runs with N ranks); "
                        "a list's env= wins")
    p.add_argument("--clusters", metavar="SPLIT",
                   help="run split over several clusters joined by impi-server (see tests/impi/multicluster)")
    p.add_argument("--relay", action="store_true",
                   help="with --clusters 2: the second cluster on a private network behind impi-relay, in network "
                        "namespaces (root; tests/impi/multicluster --relay)")
    p.add_argument("--cluster-args", action="append", default=[], metavar="K=ARGS",
                   help="with --clusters: extra mpirun options for cluster K only, e.g. '0=-vendor openmpi' (repeatable)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every run's output")
    p.add_argument("--list", action="store_true", help="print the selected runs and exit")
    args = p.parse_args()
    args.global_env = {}
    for item in args.env:
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)(?:@([0-9]+))?=(.*)$", item, re.S)
        if not m:
            print("run_mpi_tests: bad --env %r (want NAME=VALUE or NAME@N=VALUE)" % item, file=sys.stderr)
            return 2
        key = int(m.group(2)) if m.group(2) else None
        args.global_env.setdefault(key, {})[m.group(1)] = m.group(3)

    mpirun_args = ""
    if args.impl in IMPLS:
        cc, run, margs = IMPLS[args.impl]
        args.mpicc = args.mpicc or cc
        args.mpirun = args.mpirun or run
        mpirun_args = margs
        args.mpif77 = args.mpif77 or FORTRAN_IMPLS[args.impl][0]
        args.mpif90 = args.mpif90 or FORTRAN_IMPLS[args.impl][1]
        args.mpicxx = args.mpicxx or CXX_IMPLS[args.impl]
    if not args.mpicc or not args.mpirun:
        build = args.build_dir or find_default_build()
        args.mpicc = args.mpicc or os.path.join(build, "bin", "mpicc")
        args.mpirun = args.mpirun or os.path.join(build, "bin", "mpirun")
    if args.mpirun_args is None:
        args.mpirun_args = mpirun_args

    def absolute(command):
        # Runs happen in the work directory: make a relative program path absolute.
        words = shlex.split(command)
        if words and "/" in words[0] and not os.path.isabs(words[0]):
            words[0] = os.path.abspath(words[0])
        return " ".join(shlex.quote(w) for w in words)

    args.mpicc = absolute(args.mpicc)
    args.mpirun = absolute(args.mpirun)
    if not args.mpicxx:
        words = shlex.split(args.mpicc)
        words[0] = os.path.join(os.path.dirname(words[0]), "mpic++")
        args.mpicxx = " ".join(shlex.quote(w) for w in words)
    if args.clusters:
        bindir = os.path.dirname(shlex.split(args.mpirun)[0])
        words = [sys.executable, os.path.join(REPO, "tests", "impi", "multicluster"), "--bin", bindir,
                 "--clusters", args.clusters]
        for spec in args.cluster_args:
            k, _, cluster_args = spec.partition("=")
            words += ["--cluster-args", k, cluster_args]
        if args.relay:
            words.append("--relay")
        args.mpirun = " ".join(shlex.quote(w) for w in words)
        args.mpirun_args = ""
        args.np_flag = "-np"
    # Fortran wrappers default to the siblings of mpicc (bin/mpif77, bin/mpif90).
    cc_words = shlex.split(args.mpicc)
    for attr, wrapper in (("mpif77", "mpif77"), ("mpif90", "mpif90")):
        if not getattr(args, attr):
            sibling = cc_words[0][:-len("mpicc")] + wrapper if cc_words and cc_words[0].endswith("mpicc") else wrapper
            setattr(args, attr, sibling)
        setattr(args, attr, absolute(getattr(args, attr)))
    if not args.work_dir:
        h = hashlib.sha1(("%s|%s" % (args.mpicc, args.cflags)).encode()).hexdigest()[:10]
        args.work_dir = "/tmp/gridmpi-mpitests-%d/%s" % (os.getuid(), h)
    args.work_dir = os.path.abspath(args.work_dir)
    os.makedirs(args.work_dir, exist_ok=True)

    lists = args.lists or sorted(glob.glob(os.path.join(args.source_dir, "*.list")))
    entries = []
    try:
        for lf in lists:
            entries += parse_list(lf)
    except (ListError, ValueError, OSError) as e:
        print("run_mpi_tests: %s" % e, file=sys.stderr)
        return 2
    names = {}
    for e in entries:
        if e.name in names:
            print("run_mpi_tests: %s: test name %r already used at %s (add name=ALIAS)"
                  % (e.where, e.name, names[e.name]), file=sys.stderr)
            return 2
        names[e.name] = e.where

    only_np = set(int(x) for x in args.np.split(",")) if args.np else None
    min_clusters = 1
    if args.clusters:
        min_clusters = (len(args.clusters.split("+")) if "+" in args.clusters
                        else int(args.clusters.rstrip("u")))
    pats = [re.compile(x) for x in args.pattern] if args.pattern else None
    runs = []
    for e in entries:
        if args.name and e.name not in args.name:
            continue
        # Runs that pretend to be several clusters (impi.fake_clients) are
        # single-cluster runs by construction.
        if args.clusters and (e.direct or e.homogeneous or "GRIDMPI_IMPI_FAKE_CLIENTS" in e.env):
            continue
        if e.clusters_only and not args.clusters:
            continue
        counts = e.counts
        if args.largest_up_to is not None:
            if e.direct:
                continue
            fit = [n for n in counts if n <= args.largest_up_to]
            counts = [max(fit) if fit else min(counts)]
        for n in counts:
            if args.clusters and n < min_clusters:
                continue
            if only_np is not None and n not in only_np:
                continue
            r = Run(e, n)
            if pats and not any(pt.search(r.id) for pt in pats):
                continue
            runs.append(r)
    if args.list:
        for r in runs:
            print(r.id)
        return 0
    if not runs:
        print("run_mpi_tests: no run selected", file=sys.stderr)
        return 2

    become_subreaper()
    print("run_mpi_tests: %d run(s); mpicc=%s mpirun=%s %s; work dir %s"
          % (len(runs), args.mpicc, args.mpirun, args.mpirun_args, args.work_dir), flush=True)
    fflags = shlex.split(args.fflags)
    compiler = Compiler(args.mpicc, shlex.split(args.cflags), args.work_dir, os.path.abspath(args.source_dir),
                        {".f": (args.mpif77, fflags), ".f90": (args.mpif90, fflags)},
                        (args.mpicxx, shlex.split(args.cxxflags) + ["-I", MPCXX_INCLUDE]))
    out_lock = threading.Lock()
    width = max(len(r.id) for r in runs)

    def one(r):
        try:
            execute(r, args, compiler)
        except Exception as ex:  # a runner bug must not lose the other runs
            r.verdict, r.detail = "ERROR", "runner: %r" % ex
        with out_lock:
            print("%-12s %-*s %6.2fs  %s" % (r.verdict, width, r.id, r.seconds, r.detail), flush=True)
            if args.verbose or r.verdict != "PASS":
                lines = r.log.rstrip("\n").splitlines()
                if r.verdict != "PASS" and hasattr(r, "cmd"):
                    print("    $ cd %s && %s" % (args.work_dir, r.cmd))
                shown = lines if args.verbose else lines[-40:]
                if len(shown) < len(lines):
                    print("    ... (%d lines before; full log in %s)" % (len(lines) - len(shown), args.work_dir))
                for l in shown:
                    print("    | " + l)
            sys.stdout.flush()
        return r

    interrupted = False
    try:
        if args.j <= 1:
            for r in runs:
                one(r)
        else:
            with ThreadPoolExecutor(max_workers=args.j) as pool:
                list(pool.map(one, runs))
    except KeyboardInterrupt:
        interrupted = True
    reap_orphans()

    done = [r for r in runs if r.verdict]
    failed = [r for r in done if r.verdict != "PASS"]
    print("\nrun_mpi_tests: %d passed, %d failed, %d not run" % (len(done) - len(failed), len(failed),
                                                               len(runs) - len(done)))
    for r in failed:
        print("  %-12s %s  %s" % (r.verdict, r.id, r.detail[:200]))
    if interrupted:
        return 130
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
