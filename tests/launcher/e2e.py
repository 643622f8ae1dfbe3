#!/usr/bin/env python3
"""End-to-end tests of mpirun, gridmpi-proxy and the compiler wrappers.

    e2e.py --build BUILD_DIR CASE      run one case (ctest runs one per test)
    e2e.py --build BUILD_DIR --list    list the cases

Exit status: 0 pass, 1 fail, 77 skip.  Every mpirun is run with a timeout;
failure cases check the one-line message, the exit status, the time taken
and that no process of the job (ranks and the children they started) is
left running.
"""
import argparse
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

CASES = {}
SKIP = 77


def case(fn):
    CASES[fn.__name__] = fn
    return fn


class Fail(Exception):
    pass


class Skip(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Fail(message)


class Env:
    def __init__(self, build):
        self.build = os.path.abspath(build)
        self.bin = os.path.join(self.build, "bin")
        self.mpirun = os.path.join(self.bin, "mpirun")
        self.prog = os.path.join(self.build, "tests", "launcher", "control_prog")
        self.tmp = tempfile.mkdtemp(prefix="gridmpi-e2e-")
        self.piddir = os.path.join(self.tmp, "pids")
        os.mkdir(self.piddir)

    def env(self, extra=None):
        e = dict(os.environ)
        for k in list(e):
            if k.startswith("_YAMPI_") or k.startswith("GRIDMPI_") or k.startswith("IMPI_"):
                del e[k]
        e["GRIDMPI_TEST_PIDDIR"] = self.piddir
        e.update(extra or {})
        return e

    def run(self, args, extra_env=None, timeout=30, cwd=None, stdin=subprocess.DEVNULL):
        start = time.monotonic()
        p = subprocess.run([self.mpirun] + args, env=self.env(extra_env), cwd=cwd or self.tmp,
                           stdin=stdin, capture_output=True, text=True, timeout=timeout)
        p.elapsed = time.monotonic() - start
        return p

    def job_pids(self):
        pids = []
        for name in os.listdir(self.piddir):
            if name.endswith(".tmp"):
                continue  # being written (the programs write, then rename)
            with open(os.path.join(self.piddir, name)) as f:
                pids.append((name, int(f.read().strip())))
        return pids


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):  # gone between open and read
        return False


def check_nothing_left(env, expected_ranks, children=True, all_started=True):
    """No rank (and, with children, no process a rank started) is running.
    all_started=False: ranks may have been stopped before recording their pid."""
    pids = env.job_pids()
    ranks = [p for n, p in pids if n.startswith("rank.")]
    if all_started:
        check(len(ranks) == expected_ranks, f"expected {expected_ranks} rank pid files, found {sorted(pids)}")
    else:
        check(0 < len(ranks) <= expected_ranks, f"expected up to {expected_ranks} rank pid files, found {sorted(pids)}")
    if not children:
        # A job that ended normally may leave what its ranks started in the
        # background (like any shell); only the ranks must be gone.
        for n, p in pids:
            if n.startswith("child.") and alive(p):
                os.kill(p, signal.SIGKILL)
        pids = [(n, p) for n, p in pids if n.startswith("rank.")]
    deadline = time.monotonic() + 2
    while True:
        left = [(n, p) for n, p in pids if alive(p)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for n, p in left:  # do not leave them behind even when failing
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    check(not left, f"processes of the job still running after mpirun exited: {left}")


def stderr_lines(p):
    return [l for l in p.stderr.splitlines() if l.strip()]


def expect_one_failure_line(p, needle):
    lines = [l for l in stderr_lines(p) if l.startswith("mpirun: ")]
    check(len(lines) == 1, f"expected exactly one 'mpirun:' line, got {lines!r} (stderr: {p.stderr!r})")
    check(needle in lines[0], f"expected {needle!r} in {lines[0]!r}")
    return lines[0]


def wait_for_files(env, count, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len([n for n, _ in env.job_pids() if n.startswith("rank.")]) >= count:
            return
        time.sleep(0.05)
    raise Fail(f"ranks did not start: {env.job_pids()}")


# --- plain programs -------------------------------------------------------

@case
def hostname(env):
    p = env.run(["-np", "2", "hostname"])
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    check(p.stdout.splitlines() == [socket.gethostname()] * 2, f"output {p.stdout!r}")


@case
def exit_status(env):
    p = env.run(["-np", "3", "sh", "-c", "exit $((_YAMPI_MYRANK + 3))"])
    check(p.returncode == 3, f"expected the lowest rank's status 3, got {p.returncode}: {p.stderr}")
    check(stderr_lines(p) == [], f"unexpected stderr {p.stderr!r}")


@case
def rank_environment(env):
    p = env.run(["-np", "2", "sh", "-c",
                 'echo "$_YAMPI_MYRANK $_YAMPI_NPROCS $_YAMPI_NODENAME $_YAMPI_PHOST ${#_YAMPI_PHASH} $MPIROOT '
                 '$_YAMPI_LOCAL_NPROCS $_YAMPI_LOCAL_CORES"'])
    check(p.returncode == 0, p.stderr)
    lines = sorted(p.stdout.splitlines())
    root = os.path.dirname(env.bin)
    check(len(lines) == 2, lines)
    for rank, line in enumerate(lines):
        words = line.split()
        check(words[:4] == [str(rank), "2", "localhost", "127.0.0.1"], line)
        check(int(words[4]) > 0, f"no cookie: {line}")
        check(os.path.realpath(words[5]) == os.path.realpath(root), f"MPIROOT {words[5]} != {root}")
        # progress.yield's inputs: both ranks here, and mpirun's usable cores.
        check(words[6] == "2" and int(words[7]) == len(os.sched_getaffinity(0)), line)


@case
def showrank(env):
    p = env.run(["-np", "2", "-showrank", "sh", "-c", "echo hi; echo err >&2"])
    check(p.returncode == 0, p.stderr)
    check(sorted(p.stdout.splitlines()) == ["[0] hi", "[1] hi"], p.stdout)
    check(sorted(p.stderr.splitlines()) == ["[0] err", "[1] err"], p.stderr)
    p = env.run(["-np", "1", "sh", "-c", "echo hi"], {"_YAMPI_MPIRUN_SHOWRANK": "1"})
    check(p.stdout == "[0] hi\n", p.stdout)


@case
def stdin_to_rank0(env):
    p = subprocess.run([env.mpirun, "-np", "2", "sh", "-c", 'echo "$_YAMPI_MYRANK:$(cat)"'], input="line1\nline2\n",
                       env=env.env(), capture_output=True, text=True, timeout=30, cwd=env.tmp)
    check(p.returncode == 0, p.stderr)
    check(sorted(p.stdout.splitlines()) == ["0:line1", "1:", "line2"], p.stdout)


@case
def whole_lines(env):
    # Each rank writes long lines in small pieces; no line may mix two ranks.
    script = ('import os,sys,time\n'
              'r=os.environ["_YAMPI_MYRANK"]\n'
              'for i in range(200):\n'
              '  line=(r*50+"-"+str(i))\n'
              '  for k in range(0,len(line),7): os.write(1,line[k:k+7].encode())\n'
              '  os.write(1,b"\\n")\n')
    p = env.run(["-np", "3", sys.executable, "-c", script])
    check(p.returncode == 0, p.stderr)
    lines = p.stdout.splitlines()
    check(len(lines) == 600, f"{len(lines)} lines")
    for line in lines:
        r = line[0]
        check(line == r * 50 + "-" + line.split("-")[1], f"mixed line {line!r}")


@case
def dryrun(env):
    p = env.run(["-np", "2", "-dryrun", "./a.out", "x y"])
    check(p.returncode == 0, p.stderr)
    lines = p.stdout.splitlines()
    check(len(lines) == 2, lines)
    check(lines[0].startswith("rank 0 on localhost (fork): "), lines[0])
    check("_YAMPI_MYRANK=1" in lines[1] and "'x y'" in lines[1], lines[1])
    check(os.path.join(env.tmp, "a.out") in lines[0], lines[0])


@case
def usage_errors(env):
    hostfile = os.path.join(env.tmp, "bad_hosts")
    with open(hostfile, "w") as f:
        f.write("node1 many\n")
    cases = [
        (["-np", "2", "-bogus", "hostname"], "unknown option '-bogus'"),
        (["-np"], "-np needs"),
        (["-np", "x", "hostname"], "got 'x'"),
        (["-np", "2"], "no program"),
        (["-client", "0", "127.0.0.1:0", "-np", "2", "hostname"], "port 1..65535"),
        (["-np", "2", "-c", os.path.join(env.tmp, "missing"), "hostname"], "missing"),
        (["-np", "2", "-c", hostfile, "hostname"], "bad_hosts"),
    ]
    for args, needle in cases:
        p = env.run(args)
        lines = p.stderr.splitlines()
        check(p.returncode == 2, f"{args}: exit {p.returncode}, stderr {p.stderr!r}")
        check(len(lines) == 1 and lines[0].startswith("mpirun: ") and ";" in lines[0],
              f"{args}: expected one 'mpirun: cause; fix' line, got {lines!r}")
        check(needle in lines[0], f"{args}: {needle!r} not in {lines[0]!r}")
    p = env.run(["-np", "1", "hostname"], {"_YAMPI_MPIRUN_STARTUP_TIMEOUT": "soon"})
    lines = p.stderr.splitlines()
    check(p.returncode == 2 and len(lines) == 1 and "_YAMPI_MPIRUN_STARTUP_TIMEOUT" in lines[0],
          f"malformed value: exit {p.returncode}, {lines!r}")


@case
def client_flags(env):
    # mpirun -client checks its flags and the IMPI authentication before it
    # starts anything (the multi-cluster runs themselves: tests/impi/test_client_*.py).
    for args, needle in ((["-client", "32", "127.0.0.1:4000"], "client number 0..31, got '32'"),
                         (["-client", "x", "127.0.0.1:4000"], "got 'x'"),
                         (["-client", "0", "4000"], "ADDR:PORT"),
                         (["-client", "0", "127.0.0.1:70000"], "port 1..65535"),
                         (["-client", "0"], "needs ADDR:PORT")):
        p = env.run(args + ["-np", "1", "sh", "-c", "echo started"], {"IMPI_AUTH_NONE": "1"})
        lines = stderr_lines(p)
        check(p.returncode == 2 and len(lines) == 1 and needle in lines[0], f"{args}: exit {p.returncode}, {lines!r}")
        check(p.stdout == "", f"{args}: something ran: {p.stdout!r}")
    p = env.run(["-client", "0", "127.0.0.1:4000", "-np", "2", "sh", "-c", "echo started"])
    lines = stderr_lines(p)
    check(p.returncode == 2 and len(lines) == 1 and lines[0].startswith("mpirun: no IMPI authentication is enabled"),
          f"no auth: exit {p.returncode}, {lines!r}")
    check(p.stdout == "", f"no auth: something ran: {p.stdout!r}")
    p = env.run(["-help"])
    check("-client K ADDR:PORT" in p.stdout and "IMPI_AUTH_NONE" in p.stdout, p.stdout)


@case
def hostfile_placement(env):
    hostfile = os.path.join(env.tmp, "hosts")
    with open(hostfile, "w") as f:
        f.write("# two slots here\nlocalhost 2\n127.0.0.1\n")
    p = env.run(["-np", "5", "-c", hostfile, "sh", "-c", 'echo "$_YAMPI_MYRANK $_YAMPI_NODENAME $_YAMPI_LOCAL_NPROCS"'])
    check(p.returncode == 0, p.stderr)
    got = sorted(p.stdout.splitlines())
    # Both names are this host: all 5 ranks count as local (progress.yield).
    check(got == ["0 localhost 5", "1 localhost 5", "2 127.0.0.1 5", "3 localhost 5", "4 localhost 5"], got)
    # ./mpi_conf is the default host file, and -np defaults to its slots.
    with open(os.path.join(env.tmp, "mpi_conf"), "w") as f:
        f.write("127.0.0.1 3\n")
    p = env.run(["sh", "-c", 'echo "$_YAMPI_NODENAME"'])
    check(p.returncode == 0, p.stderr)
    check(p.stdout.splitlines() == ["127.0.0.1"] * 3, p.stdout)


@case
def program_not_found(env):
    p = env.run(["-np", "2", "./no-such-program"])
    check(p.returncode == 255, f"exit {p.returncode}")
    expect_one_failure_line(p, "cannot start rank 0 on host localhost: cannot execute")


# --- MPI-style ranks through ControlClient ----------------------------------

@case
def control_ok(env):
    p = env.run(["-np", "3", env.prog, "ok"])
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    lines = sorted(p.stdout.splitlines())
    check(len(lines) == 3, lines)
    for r, line in enumerate(lines):
        check(line == f"rank {r} of 3 ok ep0,ep1,ep2, local=127.0.0.1", line)
    check(stderr_lines(p) == [], p.stderr)
    check_nothing_left(env, 3, children=False)


@case
def segfault(env):
    p = env.run(["-np", "4", env.prog, "segv", "3"])
    line = expect_one_failure_line(p, "rank 3 (localhost, pid ")
    check("killed by signal 11 (Segmentation fault)" in line, line)
    pid = dict(env.job_pids())["rank.3"]
    check(f"pid {pid})" in line, f"pid {pid} not in {line}")
    check(p.returncode == 255, f"exit {p.returncode}")
    check(p.elapsed < 10, f"took {p.elapsed:.1f} s")
    check_nothing_left(env, 4)


@case
def kill9(env):
    proc = subprocess.Popen([env.mpirun, "-np", "3", env.prog, "hang"], env=env.env(), cwd=env.tmp,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_files(env, 3)
        time.sleep(0.3)
        victim = dict(env.job_pids())["rank.1"]
        start = time.monotonic()
        os.kill(victim, signal.SIGKILL)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    elapsed = time.monotonic() - start
    p = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    expect_one_failure_line(p, f"rank 1 (localhost, pid {victim}) killed by signal 9 (Killed)")
    check(p.returncode == 255, f"exit {p.returncode}")
    check(elapsed < 10, f"took {elapsed:.1f} s")
    check_nothing_left(env, 3)


@case
def mpi_abort(env):
    p = env.run(["-np", "3", env.prog, "abort", "1", "7"])
    line = expect_one_failure_line(p, "rank 1 called MPI_Abort with code 7")
    check("test abort" in line, line)
    check(p.returncode == 7, f"exit {p.returncode}")
    check(p.elapsed < 10, f"took {p.elapsed:.1f} s")
    check_nothing_left(env, 3)


@case
def no_finalize(env):
    p = env.run(["-np", "3", env.prog, "nofinal", "2"])
    expect_one_failure_line(p, "rank 2 exited with status 0 without calling MPI_Finalize")
    check(p.returncode == 255, f"exit {p.returncode}")
    check(p.elapsed < 10, f"took {p.elapsed:.1f} s")
    check_nothing_left(env, 3)


@case
def exit_before_init(env):
    p = env.run(["-np", "3", env.prog, "exit1", "0"])
    expect_one_failure_line(p, "rank 0 exited with status 1 without calling MPI_Finalize")
    check(p.returncode == 255, f"exit {p.returncode}")
    # Rank 2 may be stopped before it got as far as recording its pid.
    check_nothing_left(env, 3, all_started=False)


@case
def startup_timeout(env):
    p = env.run(["-np", "2", env.prog, "late", "1"], {"_YAMPI_MPIRUN_STARTUP_TIMEOUT": "2"})
    check(p.elapsed < 15, f"the 2 s start-up timeout took {p.elapsed:.1f} s")
    expect_one_failure_line(p, "rank 1 (localhost, pid ")
    check("did not connect to mpirun within 2 s" in p.stderr, p.stderr)
    check(p.returncode == 255, f"exit {p.returncode}")
    check_nothing_left(env, 2)


@case
def startup_busy_rank(env):
    """The start-up timeout counts while a rank is idle: a rank that uses the
    CPU before connecting (a Python rank importing on a loaded machine) gets
    more time, up to mpirun.startup_limit; an idle one fails at the timeout."""
    p = env.run(["-np", "2", env.prog, "busy", "1", "6"], {"_YAMPI_MPIRUN_STARTUP_TIMEOUT": "2"})
    check(p.returncode == 0, f"a rank busy for 6 s with a 2 s start-up timeout: exit {p.returncode}: {p.stderr}")
    check(sorted(l.split(" ok")[0] for l in p.stdout.splitlines()) == ["rank 0 of 2", "rank 1 of 2"], p.stdout)
    check_nothing_left(env, 2, children=False)
    clear_pids(env)
    p = env.run(["-np", "2", env.prog, "busy", "1", "600"],
                {"_YAMPI_MPIRUN_STARTUP_TIMEOUT": "2", "GRIDMPI_MPIRUN_STARTUP_LIMIT": "5"})
    check(p.elapsed < 20, f"the 5 s start-up limit took {p.elapsed:.1f} s")
    expect_one_failure_line(p, "rank 1 (localhost, pid ")
    check("did not connect to mpirun within 5 s of its start although it was running" in p.stderr and
          "mpirun.startup_limit" in p.stderr, p.stderr)
    check(p.returncode == 255, f"exit {p.returncode}")
    check_nothing_left(env, 2)
    clear_pids(env)
    # Idle (sleeping) before connecting: the timeout, with a message saying it was idle.
    p = env.run(["-np", "2", env.prog, "late", "1"],
                {"_YAMPI_MPIRUN_STARTUP_TIMEOUT": "2", "GRIDMPI_MPIRUN_STARTUP_LIMIT": "60"})
    check(p.elapsed < 15, f"the 2 s start-up timeout took {p.elapsed:.1f} s")
    check("did not connect to mpirun within 2 s" in p.stderr and "CPU time" in p.stderr, p.stderr)
    check(p.returncode == 255, f"exit {p.returncode}")
    check_nothing_left(env, 2)


@case
def job_timeout(env):
    p = env.run(["-np", "3", env.prog, "hang"], {"MPIEXEC_TIMEOUT": "2"})
    check(p.elapsed < 12, f"the 2 s job time limit took {p.elapsed:.1f} s")
    expect_one_failure_line(p, "ran longer than its time limit of 2 s")
    check(p.returncode == 255, f"exit {p.returncode}")
    check_nothing_left(env, 3)


@case
def sigint(env):
    proc = subprocess.Popen([env.mpirun, "-np", "3", env.prog, "hang"], env=env.env(), cwd=env.tmp,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_files(env, 3)
        time.sleep(0.3)
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    elapsed = time.monotonic() - start
    p = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    expect_one_failure_line(p, "received signal 2 (Interrupt)")
    check(p.returncode == 130, f"exit {p.returncode}")
    check(elapsed < 10, f"took {elapsed:.1f} s")
    check_nothing_left(env, 3)


@case
def mpirun_killed(env):
    # mpirun itself dies without a chance to clean up: local ranks die with
    # it (PR_SET_PDEATHSIG), ranks behind gridmpi-proxy when it loses mpirun.
    rsh = fake_rsh(env, 'shift; exec sh -c "$1"\n')
    path = os.path.join(env.tmp, "mixed_hosts")
    with open(path, "w") as f:
        f.write("localhost 2\nnodeB.invalid 2\n")
    proc = subprocess.Popen([env.mpirun, "-np", "4", "-c", path, env.prog, "hang"],
                            env=env.env(dict(REMOTE_ENV, _YAMPI_RSH=rsh)), cwd=env.tmp, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_files(env, 4)
        time.sleep(0.5)
        proc.kill()
        proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    ranks = [p for n, p in env.job_pids() if n.startswith("rank.")]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in ranks) and time.monotonic() < deadline:
        time.sleep(0.1)
    check(not any(alive(p) for p in ranks), f"ranks survived mpirun's SIGKILL: {env.job_pids()}")
    check_nothing_left(env, 4, children=False)


@case
def wrong_cookie(env):
    proc = subprocess.Popen([env.mpirun, "-np", "2", "sh", "-c", 'echo "$_YAMPI_PPORT"; sleep 30'],
                            env=env.env(), cwd=env.tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        host = b"intruder"
        payload = struct.pack(">BQii", 1, 12345, 0, 4242) + struct.pack(">I", len(host)) + host
        s.sendall(struct.pack(">I", len(payload)) + payload)
        reply = s.recv(4096)
        check(len(reply) > 5 and reply[4] == 21, f"expected a refuse frame, got {reply!r}")
        check(b"wrong job cookie" in reply, reply)
        check(s.recv(4096) == b"", "connection not closed after refusal")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    check("refused control connection from 127.0.0.1:" in err and "wrong job cookie" in err, err)
    check(proc.returncode == 128 + signal.SIGTERM, f"exit {proc.returncode}")


# --- remote shell path, with a fake remote shell that runs locally -------------

def fake_rsh(env, body):
    path = os.path.join(env.tmp, "fake_rsh")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)
    return path


def remote_hostfile(env):
    path = os.path.join(env.tmp, "remote_hosts")
    with open(path, "w") as f:
        f.write("nodeA.invalid 2\nnodeB.invalid 2\n")
    return path


REMOTE_ENV = {"GRIDMPI_MPIRUN_ADDRESS": "127.0.0.1"}


@case
def rsh_proxy(env):
    # The fake remote shell drops the host name and runs the command here, so
    # the whole agent path (gridmpi-proxy, cookie on stdin, reports) is used.
    rsh = fake_rsh(env, 'shift; exec sh -c "$1"\n')
    e = dict(REMOTE_ENV, _YAMPI_RSH=rsh)
    p = env.run(["-np", "4", "-c", remote_hostfile(env), env.prog, "ok"], e)
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    lines = sorted(p.stdout.splitlines())
    check(len(lines) == 4 and all(l.startswith(f"rank {i} of 4 ok ep0,ep1,ep2,ep3,") for i, l in enumerate(lines)),
          lines)
    check_nothing_left(env, 4, children=False)
    # Failure of a remote rank: reported with the pid the agent saw.
    for f in os.listdir(env.piddir):
        os.unlink(os.path.join(env.piddir, f))
    p = env.run(["-np", "4", "-c", remote_hostfile(env), env.prog, "segv", "2"], e)
    pid = dict(env.job_pids())["rank.2"]
    expect_one_failure_line(p, f"rank 2 (nodeB.invalid, pid {pid}) killed by signal 11 (Segmentation fault)")
    check(p.returncode == 255, f"exit {p.returncode}")
    check(p.elapsed < 10, f"took {p.elapsed:.1f} s")
    check_nothing_left(env, 4)


@case
def rsh_unreachable(env):
    rsh = fake_rsh(env, 'echo "ssh: connect to host $1 port 22: No route to host" >&2\nexit 255\n')
    p = env.run(["-np", "2", "-c", remote_hostfile(env), "hostname"], dict(REMOTE_ENV, _YAMPI_RSH=rsh))
    # Both ranks are on nodeA; whichever remote shell fails first is named.
    line = expect_one_failure_line(p, "on host nodeA.invalid")
    check(re.search(r"cannot start rank [01] on host nodeA\.invalid", line) is not None, line)
    check("exited with status 255" in line and "nodeA.invalid true" in line, line)
    check(p.returncode == 255, f"exit {p.returncode}")
    check(p.elapsed < 10, f"took {p.elapsed:.1f} s")


@case
def rsh_session_cap(env):
    # Each fake remote shell logs its start time, then takes 1 s to "log in".
    # With a cap of 2 sessions being set up at once, 6 remote ranks start in
    # 3 waves.
    log = os.path.join(env.tmp, "starts")
    rsh = fake_rsh(env, f'date +%s.%N >> {log}\nsleep 1\nshift; exec sh -c "$1"\n')
    hosts = os.path.join(env.tmp, "six_hosts")
    with open(hosts, "w") as f:
        f.write("nodeA.invalid 3\nnodeB.invalid 3\n")
    p = env.run(["-np", "6", "-c", hosts, "true"],
                dict(REMOTE_ENV, _YAMPI_RSH=rsh, GRIDMPI_RPIM_MAX_STARTING_SESSIONS="2"), timeout=60)
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    with open(log) as f:
        starts = sorted(float(x) for x in f.read().split())
    check(len(starts) == 6, starts)
    for i in range(len(starts) - 2):
        check(starts[i + 2] - starts[i] > 0.8, f"more than 2 sessions set up at once: {starts}")


@case
def help_and_flags(env):
    p = env.run(["-help"])
    check(p.returncode == 0 and "usage: mpirun" in p.stdout and "-machinefile" in p.stdout, p.stdout)
    p = env.run(["-np", "1", "-nounix", "sh", "-c", 'echo "$_YAMPI_DISABLE_UNIX"'])
    check(p.returncode == 0 and p.stdout == "1\n", f"-nounix: {p.stdout!r} {p.stderr!r}")
    p = env.run(["-np", "2", "sh", "-c", 'printf "no newline $_YAMPI_MYRANK"'])
    check(sorted(p.stdout.splitlines()) == ["no newline 0", "no newline 1"], f"partial lines: {p.stdout!r}")


# --- compiler wrappers and the installed layout --------------------------------

def run_tool(args, extra_env=None, cwd=None):
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("_YAMPI_") or k == "MPIROOT":
            del e[k]
    e.update(extra_env or {})
    return subprocess.run(args, env=e, capture_output=True, text=True, timeout=120, cwd=cwd)


def check_wrappers(root, tmp):
    mpicc = os.path.join(root, "bin", "mpicc")
    p = run_tool([mpicc, "-show", "-O2", "x.c", "-o", "x"])
    check(p.returncode == 0, p.stderr)
    words = p.stdout.split()
    check(f"-I{root}/include" in words and f"-L{root}/lib" in words and "-lmpi" in words
          and f"-Wl,-rpath,{root}/lib" in words, p.stdout)
    check(words.index("-lmpi") > words.index("x.c"), f"-lmpi must follow the sources: {p.stdout}")
    p = run_tool([mpicc, "-showme", "-c", "x.c"])
    check("-lmpi" not in p.stdout and "-c" in p.stdout.split(), f"compile-only must not link: {p.stdout}")
    p = run_tool([os.path.join(root, "bin", "mpicxx"), "-qdryrun", "x.cpp"],
                 {"_YAMPI_CXX": "my-c++", "_YAMPI_EXTCOPT": "-DA=1 -g", "_YAMPI_EXTLIBS": "-lm"})
    words = p.stdout.split()
    check(words[0] == "my-c++" and "-DA=1" in words and words[-1] == "-lm", p.stdout)
    p = run_tool([os.path.join(root, "bin", "mpic++"), "-qconfig"])
    check(p.returncode == 0 and "root:" in p.stdout and root in p.stdout, p.stdout)
    p = run_tool([mpicc, "-show"], {"MPIROOT": "/opt/elsewhere"})
    check("-I/opt/elsewhere/include" in p.stdout, f"MPIROOT must override: {p.stdout}")
    # A real compile and link against libmpi.so, run without LD_LIBRARY_PATH.
    src = os.path.join(tmp, "t.c")
    with open(src, "w") as f:
        f.write('#include <mpi.h>\n#include <stdio.h>\n'
                'int main(void) { printf("%d\\n", MPI_VERSION); return 0; }\n'
                'int unused(void) { return MPI_Finalize(); }\n')
    exe = os.path.join(tmp, "t")
    p = run_tool([mpicc, src, "-o", exe])
    check(p.returncode == 0, f"mpicc failed: {p.stderr}")
    p = run_tool([exe])
    check(p.returncode == 0 and p.stdout.strip().isdigit(), f"{p.returncode} {p.stdout} {p.stderr}")


@case
def wrappers_build_tree(env):
    check_wrappers(env.build, env.tmp)


@case
def install_relocated(env):
    prefix = os.path.join(env.tmp, "prefix")
    p = subprocess.run(["cmake", "--install", env.build, "--prefix", prefix], capture_output=True, text=True,
                       timeout=120)
    check(p.returncode == 0, p.stdout + p.stderr)
    for rel in ["bin/mpicc", "bin/mpic++", "bin/mpicxx", "bin/mpirun", "bin/mpiexec", "bin/gridmpi-proxy", "include/mpi.h",
                "lib/libmpi.so", "etc/gridmpi.toml"]:
        check(os.path.exists(os.path.join(prefix, rel)), f"{rel} not installed")
    moved = os.path.join(env.tmp, "moved")
    os.rename(prefix, moved)
    check_wrappers(moved, env.tmp)
    p = run_tool([os.path.join(moved, "bin", "mpirun"), "-np", "2", "sh", "-c", 'echo "$MPIROOT"'], cwd=env.tmp)
    check(p.returncode == 0, p.stderr)
    check(p.stdout.splitlines() == [moved] * 2, f"mpirun must find its own root: {p.stdout!r}")


# --- real MPI programs compiled with our mpicc ---------------------------------

def run_and_signal(env, args, count, action):
    """Starts mpirun, waits for `count` ranks, calls action(), returns (process, seconds after action)."""
    proc = subprocess.Popen([env.mpirun] + args, env=env.env(), cwd=env.tmp, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_files(env, count)
        time.sleep(0.3)
        start = time.monotonic()
        action(proc)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), time.monotonic() - start


def clear_pids(env):
    for f in os.listdir(env.piddir):
        os.unlink(os.path.join(env.piddir, f))


@case
def mpi_programs(env):
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "progs", "mpi_fail.c")
    exe = os.path.join(env.tmp, "mpi_fail")
    p = run_tool([os.path.join(env.bin, "mpicc"), "-o", exe, src])
    check(p.returncode == 0, f"mpicc cannot build {src}: {p.stderr.strip()[:500]}")
    p = env.run(["-np", "4", exe, "ok"], timeout=60)
    check(p.returncode == 0, f"ok: exit {p.returncode}: {p.stderr}")
    check(sorted(p.stdout.splitlines()) == [f"rank {r} of 4 sum 4" for r in range(4)], p.stdout)
    check_nothing_left(env, 4, children=False)

    clear_pids(env)
    p = env.run(["-np", "4", exe, "segv", "3"], timeout=60)
    pid = dict(env.job_pids()).get("rank.3")
    expect_one_failure_line(p, f"rank 3 (localhost, pid {pid}) killed by signal 11 (Segmentation fault)")
    check(p.returncode == 255 and p.elapsed < 10, f"segv: exit {p.returncode} after {p.elapsed:.1f} s")
    check_nothing_left(env, 4)

    clear_pids(env)
    p = env.run(["-np", "3", exe, "abort", "1", "7"], timeout=60)
    expect_one_failure_line(p, "rank 1 called MPI_Abort with code 7")
    check(p.returncode == 7 and p.elapsed < 10, f"abort: exit {p.returncode} after {p.elapsed:.1f} s")
    check_nothing_left(env, 3)

    clear_pids(env)
    p = env.run(["-np", "3", exe, "nofinal", "2"], timeout=60)
    expect_one_failure_line(p, "rank 2 exited with status 0 without calling MPI_Finalize")
    check(p.returncode == 255 and p.elapsed < 10, f"nofinal: exit {p.returncode} after {p.elapsed:.1f} s")
    check_nothing_left(env, 3)

    clear_pids(env)
    victim = []
    p, elapsed = run_and_signal(env, ["-np", "3", exe, "hang"], 3,
                                lambda proc: (victim.append(dict(env.job_pids())["rank.1"]),
                                              os.kill(victim[0], signal.SIGKILL)))
    expect_one_failure_line(p, f"rank 1 (localhost, pid {victim[0]}) killed by signal 9 (Killed)")
    check(p.returncode == 255 and elapsed < 10, f"kill -9: exit {p.returncode} after {elapsed:.1f} s")
    check_nothing_left(env, 3)

    clear_pids(env)
    p, elapsed = run_and_signal(env, ["-np", "3", exe, "hang"], 3, lambda proc: proc.send_signal(signal.SIGINT))
    expect_one_failure_line(p, "received signal 2 (Interrupt)")
    check(p.returncode == 130 and elapsed < 10, f"SIGINT: exit {p.returncode} after {elapsed:.1f} s")
    check_nothing_left(env, 3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("case", nargs="?")
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    env = Env(a.build)
    try:
        CASES[a.case](env)
    except Skip as e:
        print(f"SKIP {a.case}: {e}")
        return SKIP
    except Fail as e:
        print(f"FAIL {a.case}: {e}")
        return 1
    except subprocess.TimeoutExpired as e:
        print(f"FAIL {a.case}: timed out: {e}")
        return 1
    finally:
        # Whatever a failing case left behind must not outlive the test.
        for _, pid in env.job_pids():
            if alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        subprocess.run(["rm", "-rf", env.tmp])
    print(f"PASS {a.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
