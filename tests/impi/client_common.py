"""Shared pieces of the mpirun -client tests (tests/impi/test_client_*.py).

Each test script runs named cases; every process is started with a timeout
and only processes this test started are killed.  Exit status: 0 pass,
1 fail, 77 skip.
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77


class Fail(Exception):
    pass


class Skip(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Fail(message)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except FileNotFoundError:
        return False


def finish(proc, timeout):
    """Waits for a process started by Env.start (killed if it outlives
    `timeout`, which then raises) and returns its CompletedProcess."""
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


class Env:
    def __init__(self, build):
        self.build = os.path.abspath(build)
        self.bin = os.path.join(self.build, "bin")
        self.mpirun = os.path.join(self.bin, "mpirun")
        self.impi_server = os.path.join(self.bin, "impi-server")
        self.prog = os.path.join(self.build, "tests", "launcher", "control_prog")
        self.tmp = tempfile.mkdtemp(prefix="gridmpi-impi-client-")
        self.piddir = os.path.join(self.tmp, "pids")
        os.mkdir(self.piddir)
        for path in (self.mpirun, self.prog):
            if not os.path.exists(path):
                raise Skip(f"{path} is not built")

    def env(self, extra=None):
        """A clean environment: no inherited gridmpi, YAMPI or IMPI settings."""
        e = {k: v for k, v in os.environ.items()
             if not (k.startswith("_YAMPI_") or k.startswith("GRIDMPI_") or k.startswith("IMPI_")
                     or k == "MPIEXEC_TIMEOUT")}
        e["GRIDMPI_TEST_PIDDIR"] = self.piddir
        e.update(extra or {})
        return e

    def start(self, args, extra_env=None):
        return subprocess.Popen([self.mpirun] + args, env=self.env(extra_env), cwd=self.tmp,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, args, extra_env=None, timeout=60):
        start = time.monotonic()
        p = finish(self.start(args, extra_env), timeout)
        p.elapsed = time.monotonic() - start
        return p

    def job_pids(self):
        pids = []
        for name in os.listdir(self.piddir):
            if name.endswith(".tmp"):
                continue
            with open(os.path.join(self.piddir, name)) as f:
                pids.append((name, int(f.read().strip())))
        return pids

    def rank_pids(self):
        return {int(n.split(".")[1]): p for n, p in self.job_pids() if n.startswith("rank.")}

    def clear_pids(self):
        for f in os.listdir(self.piddir):
            os.unlink(os.path.join(self.piddir, f))

    def wait_for_ranks(self, count, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.rank_pids()) >= count:
                return
            time.sleep(0.05)
        raise Fail(f"ranks did not start: {self.job_pids()}")

    def kill_leftovers(self):
        for _, pid in self.job_pids():
            if alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def check_nothing_left(env, children=True):
    """No rank (and, with children, nothing a rank started) still runs."""
    pids = env.job_pids()
    if not children:
        for n, p in pids:
            if n.startswith("child.") and alive(p):
                os.kill(p, signal.SIGKILL)
        pids = [(n, p) for n, p in pids if n.startswith("rank.")]
    deadline = time.monotonic() + 3
    while True:
        left = [(n, p) for n, p in pids if alive(p)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    env.kill_leftovers()
    check(not left, f"processes of the job still running after mpirun exited: {left}")


def mpirun_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("mpirun: ")]


def expect_one_line(p, needle):
    lines = mpirun_lines(p.stderr)
    check(len(lines) == 1, f"expected exactly one 'mpirun:' line, got {lines!r} (stderr {p.stderr!r})")
    check(needle in lines[0], f"expected {needle!r} in {lines[0]!r}")
    return lines[0]


def main(cases):
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("cases", nargs="*", help="run only these cases")
    a = ap.parse_args()
    names = a.cases or list(cases)
    failed = 0
    skipped = 0
    for name in names:
        try:
            env = Env(a.build)
        except Skip as e:
            print(f"SKIP: {e}")
            return SKIP
        try:
            cases[name](env)
            print(f"PASS {name}")
        except Skip as e:
            print(f"SKIP {name}: {e}")
            skipped += 1
        except Fail as e:
            print(f"FAIL {name}: {e}")
            failed += 1
        except subprocess.TimeoutExpired as e:
            print(f"FAIL {name}: timed out: {e}")
            failed += 1
        finally:
            env.kill_leftovers()
            subprocess.run(["rm", "-rf", env.tmp])
        sys.stdout.flush()
    if failed:
        return 1
    if skipped == len(names):
        return SKIP
    return 0
