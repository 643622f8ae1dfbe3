#!/usr/bin/env python3
"""End-to-end tests of mpirun -vendor NAME (the poe method, rpim/vendor.hpp).

    vendor_e2e.py --build BUILD_DIR --vendor openmpi|mpich CASE
    vendor_e2e.py --list

Exit status: 0 pass, 1 fail, 77 skip (the vendor's mpiexec or its gridmpi
plug-in is not there).  Every run has a timeout.  This process makes itself
a child subreaper, so that whatever a job leaves behind (the vendor's
mpiexec, its daemons, agents, ranks, what the ranks started) is re-parented
here once mpirun is gone: after every run, no process may be left below
this one, and no rank pid recorded by the programs may be alive.
"""
import argparse
import ctypes
import os
import shutil
import signal
import subprocess
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402  (Env, check, alive, ...)
from e2e import Fail, Skip, check, expect_one_failure_line, run_and_signal, clear_pids  # noqa: E402

CASES = {}
SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
MPI_TESTS = os.path.join(os.path.dirname(HERE), "mpi")


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def make_subreaper():
    PR_SET_CHILD_SUBREAPER = 36
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise Skip("prctl(PR_SET_CHILD_SUBREAPER) failed")


def descendants():
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] in ("Z", "X"):
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
    out, todo = [], [os.getpid()]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def check_no_leftovers(env, ranks=None, all_started=True):
    """Nothing below this process (mpirun has exited), and no recorded rank alive."""
    # Zombies re-parented here are reaped; anything else is a leftover.
    deadline = time.monotonic() + 2
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        left = descendants()
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    described = [(p, cmdline(p)) for p in left]
    for p in left:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    check(not left, f"processes left behind after mpirun exited: {described}")
    if ranks is not None:
        e2e.check_nothing_left(env, ranks, children=True, all_started=all_started)


class VendorEnv(e2e.Env):
    def __init__(self, build, vendor):
        super().__init__(build)
        self.vendor = vendor
        self.mpiexec = shutil.which("mpiexec." + vendor)
        self.plugin = os.path.join(self.build, "lib", "gridmpi", "vendor", f"libgridmpi-vendor-{vendor}.so")
        self.hosttmp = os.path.join(self.tmp, "tmpdir")
        os.mkdir(self.hosttmp)

    def env(self, extra=None):
        e = super().env(extra)
        e["TMPDIR"] = self.hosttmp  # the translated host file must be removed from here
        # A user's Open MPI settings must not change the runs.
        for k in list(e):
            if k.startswith("OMPI_MCA_"):
                del e[k]
        return e

    def vrun(self, args, timeout=60, extra_env=None):
        return self.run(["-vendor", self.vendor] + args, extra_env=extra_env, timeout=timeout)

    def compile(self, name, src, extra=()):
        exe = os.path.join(self.tmp, name)
        if not os.path.exists(exe):
            p = e2e.run_tool([os.path.join(self.bin, "mpicc"), "-O1", "-I", MPI_TESTS, "-o", exe, src, *extra])
            check(p.returncode == 0, f"mpicc cannot build {src}: {p.stderr.strip()[:800]}")
        return exe

    def vendor_prog(self):
        return self.compile("vendor_prog", os.path.join(HERE, "progs", "vendor_prog.c"))

    def mpi_fail(self):
        return self.compile("mpi_fail", os.path.join(HERE, "progs", "mpi_fail.c"))


def vendor_rank_env(env):
    return "OMPI_COMM_WORLD_RANK" if env.vendor == "openmpi" else "PMI_RANK"


def parse_env_lines(env, out, n):
    rows = {}
    for line in out.splitlines():
        w = line.split()
        if len(w) >= 14 and w[0] == "rank":
            rows[int(w[1])] = dict(size=int(w[3]), pid=int(w[5]), vendor=w[7], plugin=w[9], myrank=w[11],
                                   progress=w[13])
    check(sorted(rows) == list(range(n)), f"expected one line from each of ranks 0..{n - 1}: {out!r}")
    for r, row in rows.items():
        check(row["size"] == n, f"rank {r}: size {row['size']}, expected {n}")
        check(row["vendor"] == env.vendor, f"rank {r}: GRIDMPI_VENDOR={row['vendor']}, expected {env.vendor}")
        check(row["plugin"] == env.plugin, f"rank {r}: GRIDMPI_VENDOR_PLUGIN={row['plugin']}, expected {env.plugin}")
        check(row["myrank"] == "-", f"rank {r}: _YAMPI_MYRANK is set ({row['myrank']}); the vendor gives the rank")
    return rows


# --- normal runs ----------------------------------------------------------

@case
def env_and_ranks(env):
    """4 ranks: distinct ranks from the vendor, one environment, pids as recorded."""
    p = env.vrun(["-np", "4", env.vendor_prog(), "env"])
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    rows = parse_env_lines(env, p.stdout, 4)
    recorded = dict(env.job_pids())
    for r, row in rows.items():
        check(recorded.get(f"rank.{r}") == row["pid"], f"rank {r}: pid {row['pid']} vs recorded {recorded}")
    check_no_leftovers(env, 4)


@case
def mpi_programs(env):
    """A few tests/mpi programs (point-to-point and collectives), 4 ranks each."""
    for name in ("p2p_blocking", "p2p_nonblocking", "p2p_wildcard", "coll_bcast", "coll_reduce", "coll_alltoall"):
        src = os.path.join(MPI_TESTS, name + ".c")
        if not os.path.exists(src):
            continue
        exe = env.compile(name, src)
        p = env.vrun(["-np", "4", exe], timeout=120)
        check(p.returncode == 0, f"{name}: exit {p.returncode}: {p.stdout[-2000:]} {p.stderr[-2000:]}")
        check_no_leftovers(env)


@case
def exit_status(env):
    """GridMPI's rule, exactly, per rank: the lowest rank's code (not the vendor's aggregate)."""
    prog = env.vendor_prog()
    p = env.vrun(["-np", "3", prog, "codes", "0", "5", "9"])
    check(p.returncode == 0, f"codes 0 5 9: exit {p.returncode} (expected rank 0's 0): {p.stderr}")
    p = env.vrun(["-np", "3", prog, "codes", "4", "0", "9"])
    check(p.returncode == 4, f"codes 4 0 9: exit {p.returncode} (expected rank 0's 4): {p.stderr}")
    check(not [l for l in p.stderr.splitlines() if l.startswith("mpirun: ")], f"no failure line expected: {p.stderr}")
    # A plain program: the rank from the vendor's own variable.
    var = vendor_rank_env(env)
    p = env.vrun(["-np", "3", "sh", "-c", f"exit $((${var} + 3))"])
    check(p.returncode == 3, f"sh exit rank+3: exit {p.returncode}: {p.stderr}")
    check_no_leftovers(env)


@case
def hostname(env):
    p = env.vrun(["-np", "4", "hostname"])
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    check(p.stdout.splitlines() == [os.uname().nodename] * 4 or
          sorted(p.stdout.split()) == sorted([os.uname().nodename] * 4), f"4 host names expected: {p.stdout!r}")
    check_no_leftovers(env)


@case
def showrank(env):
    p = env.vrun(["-np", "2", "-showrank", "sh", "-c", "echo hello"])
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    lines = p.stdout.splitlines()
    check(len(lines) == 2 and all("hello" in l and l != "hello" for l in lines),
          f"two tagged lines expected (the vendor's tagging): {lines!r}")
    check_no_leftovers(env)


@case
def hostfile(env):
    """-c FILE translated to the vendor's form in a private file, removed at the end."""
    hosts = os.path.join(env.tmp, "hosts")
    with open(hosts, "w") as f:
        f.write("# two lines, one host\nlocalhost 3\nlocalhost:1\n")
    p = env.vrun(["-c", hosts, "-dryrun", "true"])
    check(p.returncode == 0, f"dryrun: exit {p.returncode}: {p.stderr}")
    # Open MPI refuses a host listed twice with slots: merged.
    want = ["localhost slots=4"] if env.vendor == "openmpi" else ["localhost:3", "localhost:1"]
    for w in want:
        check(w in p.stdout.splitlines(), f"dryrun must show the translated line {w!r}: {p.stdout!r}")
    flag = "--hostfile" if env.vendor == "openmpi" else "-f"
    check(f" {flag} " in p.stdout, f"dryrun must pass the host file with {flag}: {p.stdout!r}")
    p = env.vrun(["-c", hosts, env.vendor_prog(), "env"])
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    parse_env_lines(env, p.stdout, 4)  # -np defaults to the slots: 3 + 1
    check(os.listdir(env.hosttmp) == [], f"the translated host file was not removed: {os.listdir(env.hosttmp)}")
    check_no_leftovers(env, 4)


@case
def oversubscribe(env):
    """8 ranks on this machine's cores (2 in CI)."""
    p = env.vrun(["-np", "8", env.vendor_prog(), "env"], timeout=120)
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    parse_env_lines(env, p.stdout, 8)
    check_no_leftovers(env, 8)


@case
def progress_thread(env):
    """-progress thread reaches every rank as the parameter progress.mode, from the command line."""
    info = os.path.join(env.bin, "gridmpi-info")
    p = env.vrun(["-np", "2", "-progress", "thread", info, "progress.mode"])
    check(p.returncode == 0, f"gridmpi-info: exit {p.returncode}: {p.stderr}")
    check(p.stdout.count("thread") >= 2 and "command line" in p.stdout,
          f"each rank's gridmpi-info must show progress.mode = thread from the command line: {p.stdout!r}")
    p = env.vrun(["-np", "2", "-progress", "poll", env.vendor_prog(), "env"])
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    rows = parse_env_lines(env, p.stdout, 2)
    check(all(r["progress"] == "poll" for r in rows.values()), f"GRIDMPI_PROGRESS_MODE=poll expected: {rows}")
    check_no_leftovers(env, 2)


@case
def detached_child(env):
    """A rank that leaves a process in a new session behind: mpirun (a subreaper) stops it too."""
    p = env.vrun(["-np", "2", "sh", "-c", "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!"])
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    pids = [int(w) for w in p.stdout.split()]
    check(len(pids) == 2, f"two pids expected: {p.stdout!r}")
    time.sleep(0.2)
    left = [pid for pid in pids if e2e.alive(pid)]
    check_no_leftovers(env)
    check(not left, f"the detached children {left} outlived mpirun")


# --- failures -------------------------------------------------------------

@case
def mpi_abort(env):
    exe = env.mpi_fail()
    p = env.vrun(["-np", "4", exe, "abort", "1", "7"])
    expect_one_failure_line(p, "rank 1 called MPI_Abort with code 7")
    check(p.returncode == 7 and p.elapsed < 15, f"abort: exit {p.returncode} after {p.elapsed:.1f} s")
    check_no_leftovers(env, 4)


@case
def segfault(env):
    exe = env.mpi_fail()
    p = env.vrun(["-np", "4", exe, "segv", "2"])
    pid = dict(env.job_pids()).get("rank.2")
    expect_one_failure_line(p, f"rank 2 (localhost, pid {pid}) killed by signal 11 (Segmentation fault)")
    check(p.returncode == 255 and p.elapsed < 15, f"segv: exit {p.returncode} after {p.elapsed:.1f} s")
    check_no_leftovers(env, 4)


@case
def killed_rank(env):
    exe = env.mpi_fail()
    victim = []
    p, elapsed = run_and_signal(env, ["-vendor", env.vendor, "-np", "4", exe, "hang"], 4,
                                lambda proc: (victim.append(dict(env.job_pids())["rank.1"]),
                                              os.kill(victim[0], signal.SIGKILL)))
    expect_one_failure_line(p, f"rank 1 (localhost, pid {victim[0]}) killed by signal 9 (Killed)")
    check(p.returncode == 255 and elapsed < 15, f"kill -9: exit {p.returncode} after {elapsed:.1f} s")
    check_no_leftovers(env, 4)


@case
def sigterm(env):
    exe = env.mpi_fail()
    p, elapsed = run_and_signal(env, ["-vendor", env.vendor, "-np", "4", exe, "hang"], 4,
                                lambda proc: proc.send_signal(signal.SIGTERM))
    expect_one_failure_line(p, "received signal 15 (Terminated)")
    check(p.returncode == 143 and elapsed < 15, f"SIGTERM: exit {p.returncode} after {elapsed:.1f} s")
    check_no_leftovers(env, 4)


@case
def killed_mpirun(env):
    """mpirun killed by SIGKILL cannot clean up: its host file (TMPDIR) and Open MPI's shared-memory
    directory (/dev/shm), both named after its pid, go with the next vendor job on the host."""
    hosts = os.path.join(env.tmp, "hosts")
    with open(hosts, "w") as f:
        f.write("localhost 2\n")
    # Ranks that start nothing of their own: a process a rank forks stays in
    # its process group, which the agent kills when mpirun goes, unless the
    # vendor's launcher SIGKILLs the agent first (MPICH's hydra may, once
    # its output pipes to mpirun break): then only the rank goes (its parent
    # death signal).  That race is not what this case is about.
    rank = 'echo $$ > "$GRIDMPI_TEST_PIDDIR/rank.$$"; exec sleep 60'
    pid = []
    p, _ = run_and_signal(env, ["-vendor", env.vendor, "-c", hosts, "-np", "2", "sh", "-c", rank], 2,
                          lambda proc: (pid.append(proc.pid), proc.send_signal(signal.SIGKILL)))
    check(p.returncode == -signal.SIGKILL, f"mpirun was not killed: exit {p.returncode}")
    # The agents stop their ranks once they see mpirun gone (SIGTERM, SIGKILL
    # a second later): allow for a loaded machine.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(e2e.alive(q) for _, q in env.job_pids()):
        time.sleep(0.1)
    alive = [(n, q) for n, q in env.job_pids() if e2e.alive(q)]
    check(not alive, f"ranks alive 10 s after mpirun was killed: {alive}")
    check_no_leftovers(env)
    prefix = f"-{pid[0]}-"
    left = [os.path.join(env.hosttmp, n) for n in os.listdir(env.hosttmp) if n.startswith("gridmpi-hosts" + prefix)]
    check(len(left) == 1, f"the killed mpirun's host file is not in TMPDIR: {os.listdir(env.hosttmp)}")
    shm = [os.path.join("/dev/shm", n) for n in os.listdir("/dev/shm") if n.startswith("gridmpi-vendor" + prefix)]
    if env.vendor == "openmpi":
        check(len(shm) == 1, f"the killed mpirun's /dev/shm/gridmpi-vendor{prefix}* is not there")
    clear_pids(env)
    p = env.vrun(["-np", "2", env.vendor_prog(), "env"])
    check(p.returncode == 0, f"the next job: exit {p.returncode}: {p.stderr}")
    still = [f for f in left + shm if os.path.exists(f)]
    check(not still, f"the next mpirun left the killed one's scratch files: {still}")
    check_no_leftovers(env, 2)


@case
def no_finalize(env):
    exe = env.mpi_fail()
    p = env.vrun(["-np", "3", exe, "nofinal", "2"])
    expect_one_failure_line(p, "rank 2 exited with status 0 without calling MPI_Finalize")
    check(p.returncode == 255 and p.elapsed < 15, f"nofinal: exit {p.returncode} after {p.elapsed:.1f} s")
    check_no_leftovers(env, 3)


@case
def wrong_name(env):
    p = env.run(["-vendor", "nosuchmpi", "-np", "2", "true"], timeout=30)
    expect_one_failure_line(p, "unknown vendor MPI 'nosuchmpi'")
    check(p.returncode == 2 and p.elapsed < 5, f"exit {p.returncode} after {p.elapsed:.1f} s")
    p = env.run(["-np", "2", "true"], extra_env={"GRIDMPI_VENDOR": "nosuchmpi"}, timeout=30)
    expect_one_failure_line(p, "unknown vendor MPI 'nosuchmpi'")
    check(p.returncode == 2, f"GRIDMPI_VENDOR=nosuchmpi: exit {p.returncode}")
    p = env.run(["-progress", "fast", "-np", "2", "true"], timeout=30)
    expect_one_failure_line(p, "-progress needs poll or thread")
    check(p.returncode == 2, f"-progress fast: exit {p.returncode}")
    check_no_leftovers(env)


@case
def missing_plugin(env):
    missing = os.path.join(env.tmp, "no-such-plugin.so")
    p = env.vrun(["-np", "2", "true"], extra_env={"GRIDMPI_VENDOR_PLUGIN": missing}, timeout=30)
    line = expect_one_failure_line(p, "vendor plug-in " + missing + " does not exist")
    check(p.returncode == 2 and p.elapsed < 5, f"exit {p.returncode} after {p.elapsed:.1f} s: {line}")
    check_no_leftovers(env)


@case
def launcher_fails(env):
    """The vendor's mpiexec starts nothing (a bad option): one line, no hang."""
    p = env.vrun(["-np", "2", "true"], extra_env={"GRIDMPI_VENDOR_MPIEXEC_ARGS": "--no-such-option-at-all"},
                 timeout=60)
    expect_one_failure_line(p, "vendor's mpiexec")
    check(p.returncode == 255 and p.elapsed < 20, f"exit {p.returncode} after {p.elapsed:.1f} s")
    check_no_leftovers(env)


@case
def site_defined(env):
    """A vendor defined in a site file (another name, the same mpiexec)."""
    site = os.path.join(env.tmp, "site.toml")
    style = env.vendor
    with open(site, "w") as f:
        f.write(f'[vendor]\nname = "sitempi"\nmpiexec = "{env.mpiexec}"\nstyle = "{style}"\n'
                f'plugin = "{env.plugin}"\n')
    p = env.run(["-np", "2", env.vendor_prog(), "env"], extra_env={"GRIDMPI_SITE_FILE": site}, timeout=60)
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    rows = {}
    for line in p.stdout.splitlines():
        w = line.split()
        if len(w) >= 8 and w[0] == "rank":
            rows[int(w[1])] = w[7]
    check(rows == {0: "sitempi", 1: "sitempi"}, f"GRIDMPI_VENDOR=sitempi expected in both ranks: {p.stdout!r}")
    check_no_leftovers(env, 2)


@case
def size_mismatch(env):
    """The vendor's size must equal _YAMPI_NPROCS: a program started by the vendor's mpiexec directly
    with a stale gridmpi environment says so in one line per rank and ends (no hang).  The vendor's
    mpiexec may kill the other rank as soon as the first one exits (MPICH's hydra does), before it
    has said anything: at least one line, at most one per rank."""
    prog = env.vendor_prog()
    e = env.env({"_YAMPI_PHOST": "127.0.0.1", "_YAMPI_PPORT": "1", "_YAMPI_PHASH": "1", "_YAMPI_NPROCS": "3",
                 "GRIDMPI_VENDOR_PLUGIN": env.plugin})
    extra = ["--allow-run-as-root", "--oversubscribe"] if env.vendor == "openmpi" else []
    start = time.monotonic()
    p = subprocess.run([env.mpiexec, *extra, "-n", "2", prog, "env"], env=e, cwd=env.tmp,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - start
    lines = [l for l in p.stderr.splitlines() if "the vendor MPI started 2 processes but mpirun expects 3" in l]
    # Before the size check a process does not know its rank yet: told apart by pid.
    pids = [m.group(1) if (m := re.search(r"pid (\d+)", l)) else "?" for l in lines]
    check(1 <= len(lines) <= 2 and len(set(pids)) == len(pids) and "?" not in pids,
          f"one line per process expected: {p.stderr!r}")
    check(p.returncode != 0 and elapsed < 30, f"exit {p.returncode} after {elapsed:.1f} s")
    check_no_leftovers(env)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build")
    ap.add_argument("--vendor")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("case", nargs="?")
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    env = VendorEnv(a.build, a.vendor)
    name = f"{a.vendor}.{a.case}"
    try:
        if not env.mpiexec:
            raise Skip(f"mpiexec.{a.vendor} is not installed")
        if not os.path.exists(env.plugin):
            raise Skip(f"the {a.vendor} plug-in {env.plugin} is not built")
        make_subreaper()
        CASES[a.case](env)
    except Skip as e:
        print(f"SKIP {name}: {e}")
        return SKIP
    except Fail as e:
        print(f"FAIL {name}: {e}")
        return 1
    except subprocess.TimeoutExpired as e:
        print(f"FAIL {name}: timed out: {e}")
        return 1
    finally:
        for p in descendants():
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for _, pid in env.job_pids():
            if e2e.alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        subprocess.run(["rm", "-rf", env.tmp])
    print(f"PASS {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
