#!/usr/bin/env python3
"""A two-client job of gridmpi and LAM/MPI 7.1.4, the only other IMPI client
implementation, through our impi-server (root only; exit 77 when not root or
network namespaces cannot be made).

LAM's IMPI daemon tells the IMPI hosts of other clients apart by the source
address of their connections, so gridmpi and LAM live in two network
namespaces joined by a veth pair:

    G  10.92.0.1  (impi-server, mpirun -client, 1 rank)  ----  10.92.0.2  L  (LAM, 2 ranks)

LAM refuses to run as root: it runs as `nobody` (from a private copy of
the LAM install), in a private PID namespace, so that none of its daemons
(lamd, impid) can outlive the test.  LAM comes from
tests/thirdparty/lam/build (cached under $HOME/.cache/gridmpi; about 10
minutes when not cached yet).  tests/impi/lam_check.c, built by both mpicc,
checks point-to-point between every pair of ranks both ways (int, short,
double, long, char), barrier, bcast from every root, reduce to every root
and allreduce.  Its LAM ranks come late to a root's first Bcast, so that
the root's messages wait at them; a Barrier sits between a root's two
Bcasts because LAM loses the second of two messages of one tag from one
rank on the IMPI collective context when both wait at its rank: LAM
against LAM hangs there exactly as gridmpi against LAM does
(LAM_TEST_BACK_TO_BACK=1 leaves the Barrier out and shows it;
impi/README.md, "LAM/MPI 7.1.4 as another client").

Cases (the default ones, or name some):
  lam_first       LAM is client 0 (ranks 0, 1), gridmpi client 1 (rank 2)
  gridmpi_first   gridmpi is client 0 (rank 0), LAM client 1 (ranks 1, 2)
  lam_lam         LAM in gridmpi's place (client 0, 1 rank) and LAM as client 1 (2 ranks):
                  the control, what LAM does with itself
  relay_lam_first, relay_gridmpi_first
                  as lam_first and gridmpi_first, but gridmpi's rank sits on a
                  private network P (10.92.1.2, no route to L) behind
                  impi-relay in G (G is P's front end, 10.92.1.1): LAM reaches
                  the gridmpi rank only through the relay's public port, and
                  the rank reaches LAM only through the relay's CONNECT
                  (docs/multicluster.md, "Private-address clusters")

    G  10.92.0.1 (impi-server, impi-relay) ---- 10.92.0.2  L (LAM)
       10.92.1.1 ---- 10.92.1.2  P (gridmpi, relay cases)

--record DIR runs gridmpi_first through recording relays and keeps LAM's bytes
(lam_recorded.py was made so).  LAM_TEST_NO_DIALECT=1 leaves IMPI_LAM_CLIENTS
unset (gridmpi then speaks the protocol's text to LAM, and the job fails).

    test_lam.py --build BUILD_DIR [-v] [CASE...]
"""
import argparse
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
PREFIX = "gmlam"  # namespace names: gmlam<G|L><pid of this test>
G_ADDR, L_ADDR = "10.92.0.1", "10.92.0.2"
G_PRIVATE, P_ADDR = "10.92.1.1", "10.92.1.2"  # the relay cases' private network
HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "lam_check.c")
LAM_BUILD = os.path.join(os.path.dirname(HERE), "thirdparty", "lam", "build")
RUN_USER = "nobody"
VERBOSE = False


class Fail(Exception):
    pass


class Skip(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Fail(message)


def say(text):
    if VERBOSE:
        print("  " + text, flush=True)


def run(argv, timeout=30, **kw):
    return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, **kw)


def ip(*args):
    p = run(["ip"] + list(args))
    if p.returncode != 0:
        raise Fail(f"ip {' '.join(args)}: {p.stderr.strip()}")


def pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


class Topology:
    def __init__(self):
        self.ns = {k: f"{PREFIX}{k}{os.getpid()}" for k in "GLP"}
        self.created = []

    def __getitem__(self, k):
        return self.ns[k]

    def remove_stale(self):
        """Namespaces left by an earlier run of this test that was SIGKILLed."""
        try:
            names = run(["ip", "netns", "list"], timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            return
        for line in names.splitlines():
            m = re.match(rf"({PREFIX}[GLP](\d+))\b", line)
            if m and not pid_alive(int(m.group(2))):
                for pid in self.pids_in(m.group(1)):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                run(["ip", "netns", "del", m.group(1)], timeout=10)

    def build(self):
        for k in "GLP":
            try:
                ip("netns", "add", self.ns[k])
            except Fail as e:
                if not self.created:
                    raise Skip(f"cannot create network namespaces here: {e}")
                raise
            self.created.append(self.ns[k])
            ip("-n", self.ns[k], "link", "set", "lo", "up")
        ip("link", "add", "lg", "netns", self.ns["G"], "type", "veth", "peer", "name", "gl", "netns", self.ns["L"])
        ip("-n", self.ns["G"], "addr", "add", G_ADDR + "/24", "dev", "lg")
        ip("-n", self.ns["L"], "addr", "add", L_ADDR + "/24", "dev", "gl")
        ip("-n", self.ns["G"], "link", "set", "lg", "up")
        ip("-n", self.ns["L"], "link", "set", "gl", "up")
        # P: only its own subnet, and G does not forward (a new namespace's
        # default), so P and L cannot reach each other but through impi-relay.
        ip("link", "add", "gp", "netns", self.ns["G"], "type", "veth", "peer", "name", "pg", "netns", self.ns["P"])
        ip("-n", self.ns["G"], "addr", "add", G_PRIVATE + "/24", "dev", "gp")
        ip("-n", self.ns["P"], "addr", "add", P_ADDR + "/24", "dev", "pg")
        ip("-n", self.ns["G"], "link", "set", "gp", "up")
        ip("-n", self.ns["P"], "link", "set", "pg", "up")

    @staticmethod
    def pids_in(name):
        try:
            return [int(w) for w in run(["ip", "netns", "pids", name], timeout=10).stdout.split()]
        except subprocess.TimeoutExpired:
            return []

    def pids(self):
        return {pid: name for name in self.created for pid in self.pids_in(name)}

    def kill_all(self):
        """Everything still running in our namespaces was started by this test."""
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def delete(self):
        self.kill_all()
        for name in reversed(self.created):
            run(["ip", "netns", "del", name], timeout=10)
        self.created = []


def describe(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def check_nothing_left(topo):
    deadline = time.monotonic() + 10
    while True:
        left = topo.pids()
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if left:
        text = ", ".join(f"{pid} in {ns}: {describe(pid)}" for pid, ns in left.items())
        topo.kill_all()
        raise Fail(f"still running after the job ended: {text}")


class Test:
    def __init__(self, build):
        self.build = os.path.abspath(build)
        self.mpirun = os.path.join(self.build, "bin", "mpirun")
        self.impi_server = os.path.join(self.build, "bin", "impi-server")
        self.impi_relay = os.path.join(self.build, "bin", "impi-relay")
        mpicc = os.path.join(self.build, "bin", "mpicc")
        for path in (self.mpirun, self.impi_server, self.impi_relay, mpicc):
            if not os.path.exists(path):
                raise Skip(f"{path} is not built")
        try:
            user = pwd.getpwnam(RUN_USER)
        except KeyError:
            raise Skip(f"no user '{RUN_USER}' to run LAM as (LAM refuses root)")
        self.uid, self.gid = user.pw_uid, user.pw_gid
        self.tmp = tempfile.mkdtemp(prefix="gridmpi-lam-")
        os.chmod(self.tmp, 0o755)
        # LAM, built (or found in the cache) by the project's script.
        p = run([LAM_BUILD, "--print-prefix"], timeout=2000)
        if p.returncode != 0:
            raise Fail(f"tests/thirdparty/lam/build failed: {p.stderr.strip()[-2000:]}")
        cached = p.stdout.strip().splitlines()[-1]
        # A private copy the run user can read (the cache may sit in root's home).
        self.lam = os.path.join(self.tmp, "lam")
        shutil.copytree(cached, self.lam, symlinks=True)
        self.gridmpi_exe = os.path.join(self.tmp, "check_gridmpi")
        self.lam_exe = os.path.join(self.tmp, "check_lam")
        # LAM_TEST_BACK_TO_BACK=1: no Barrier between the two Bcasts of one root (lam_check.c), which
        # shows LAM's own defect: every case then hangs in the second Bcast, lam_lam included.
        flags = ["-DLAM_CHECK_BACK_TO_BACK"] if os.environ.get("LAM_TEST_BACK_TO_BACK") else []
        p = run([mpicc, "-O1", "-Wall"] + flags + ["-o", self.gridmpi_exe, SOURCE], timeout=120)
        check(p.returncode == 0, f"gridmpi mpicc {SOURCE}: {p.stderr}")
        env = dict(os.environ, LAMHOME=self.lam, PATH=os.path.join(self.lam, "bin") + ":" + os.environ["PATH"])
        p = run([os.path.join(self.lam, "bin", "mpicc"), "-O1"] + flags + ["-o", self.lam_exe, SOURCE], timeout=120,
                env=env)
        check(p.returncode == 0, f"LAM mpicc {SOURCE}: {p.stdout}{p.stderr}")


LAM_SCRIPT = r"""
cd "$WORK" || exit 2
echo localhost > hosts
lamboot -H hosts > lamboot.log 2>&1 || { cat lamboot.log >&2; echo "lam: lamboot failed" >&2; exit 2; }
mpirun -client "$K" "$SERVER" -np "$NP" "$PROG"
rc=$?
lamhalt -H > /dev/null 2>&1 || lamwipe -H hosts > /dev/null 2>&1
exit $rc
"""


RELAY = r"""
import socket, sys, threading
# A recording TCP relay: listen on ADDR:PORT, forward to ADDR:TARGET; write
# each direction of each connection to OUT.<n>.<up|down>.  Ends after CONNS.
addr, port, target, out, conns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); ls.bind((addr, port)); ls.listen(8)
print("ready", flush=True)
def pump(a, b, path):
    with open(path, "wb") as f:
        while True:
            try:
                d = a.recv(65536)
            except OSError:
                d = b""
            if not d:
                try: b.shutdown(socket.SHUT_WR)
                except OSError: pass
                return
            f.write(d); f.flush(); b.sendall(d)
threads = []
for n in range(conns):
    c, _ = ls.accept()
    s = socket.create_connection((addr, target))
    for a, b, d in ((c, s, "up"), (s, c, "down")):
        t = threading.Thread(target=pump, args=(a, b, f"{out}.{n}.{d}")); t.start(); threads.append(t)
for t in threads: t.join()
"""


class Job:
    """impi-server and gridmpi's mpirun -client in G, LAM's mpirun -client in L."""

    def __init__(self, t, topo, name):
        self.t, self.topo, self.name = t, topo, name
        self.dir = os.path.join(t.tmp, "job-" + name)
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o755)
        self.procs = {}

    @staticmethod
    def env(extra):
        e = {k: v for k, v in os.environ.items()
             if not (k.startswith(("_YAMPI_", "GRIDMPI_", "IMPI_", "MPIEXEC_", "LAM")) or k == "MPIROOT")}
        e.update(extra)
        return e

    def spawn(self, what, argv, env, limit):
        out = open(os.path.join(self.dir, what + ".out"), "wb")
        err = open(os.path.join(self.dir, what + ".err"), "wb")
        with out, err:
            p = subprocess.Popen(["timeout", "-k", "5", str(limit)] + argv, env=env, cwd=self.dir,
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        self.procs[what] = p
        return p

    def output(self, what):
        with open(os.path.join(self.dir, what + ".out"), errors="replace") as f:
            out = f.read()
        with open(os.path.join(self.dir, what + ".err"), errors="replace") as f:
            return out, f.read()

    def start_server(self):
        out_file = os.path.join(self.dir, "server.address")
        self.spawn("server", ["ip", "netns", "exec", self.topo["G"], self.t.impi_server, "-server", "2",
                              "-host", G_ADDR, "-verbose", "-out", out_file],
                   self.env({"IMPI_AUTH_NONE": "1"}), 150)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and self.procs["server"].poll() is None:
            if os.path.exists(out_file):
                with open(out_file) as f:
                    line = f.readline().strip()
                if line:
                    self.address = line
                    say(f"{self.name}: impi-server at {line}")
                    return
            time.sleep(0.02)
        raise Fail(f"impi-server printed no address: {self.output('server')[1]}")

    def start_gridmpi(self, k, np_, lam_client, extra=None, side="G", server=None):
        env = {"IMPI_AUTH_NONE": "1", "IMPI_LAM_CLIENTS": str(lam_client)}
        env.update(extra or {})
        if os.environ.get("LAM_TEST_TRACE"):
            env["GRIDMPI_LOG_LEVEL"] = "trace"
        if os.environ.get("LAM_TEST_NO_DIALECT"):  # to see the job fail without IMPI_LAM_CLIENTS
            del env["IMPI_LAM_CLIENTS"]
        self.spawn("gridmpi", ["ip", "netns", "exec", self.topo[side], self.t.mpirun, "-client", str(k),
                               server or self.address, "-np", str(np_), self.t.gridmpi_exe], self.env(env), 120)

    def start_impi_relay(self, k):
        """impi-relay in G for client k on P's network; returns the address it prints."""
        self.spawn("impi-relay", ["ip", "netns", "exec", self.topo["G"], self.t.impi_relay, "-relay", str(k),
                                  self.address, "-net", G_PRIVATE + "/24"], self.env({}), 150)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and self.procs["impi-relay"].poll() is None:
            line = self.output("impi-relay")[0].strip()
            if line:
                say(f"{self.name}: impi-relay at {line}")
                check(line.startswith(G_PRIVATE + ":"), f"impi-relay printed {line!r}, not an address on P's network")
                return line
            time.sleep(0.02)
        raise Fail(f"impi-relay printed no address: {self.output('impi-relay')}")

    def start_relay(self, what, port, target, connections):
        """A recording relay in G (RELAY above); returns once it listens."""
        self.spawn(what, ["ip", "netns", "exec", self.topo["G"], sys.executable, "-c", RELAY, G_ADDR, str(port),
                          str(target), os.path.join(self.dir, what), str(connections)], self.env({}), 150)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if "ready" in self.output(what)[0]:
                return
            check(self.procs[what].poll() is None, f"relay {what}: {self.output(what)}")
            time.sleep(0.02)
        raise Fail(f"relay {what} did not start")

    def start_lam(self, k, np_, server, what="lam", side="L"):
        work = os.path.join(self.dir, what)
        os.makedirs(work)
        os.chown(work, self.t.uid, self.t.gid)
        env = {"HOME": work, "USER": RUN_USER, "LOGNAME": RUN_USER, "TMPDIR": work, "LAMHOME": self.t.lam,
               "PATH": os.path.join(self.t.lam, "bin") + ":/usr/local/bin:/usr/bin:/bin",
               "LAM_MPI_SESSION_PREFIX": work, "LAM_MPI_SESSION_SUFFIX": f"impi{k}",
               "IMPI_AUTH_NONE": "1", "IMPI_HOST_NAME": L_ADDR if side == "L" else G_ADDR,
               "WORK": work, "K": str(k), "SERVER": server, "NP": str(np_), "PROG": self.t.lam_exe}
        # A private PID namespace: lamd and impid detach themselves, and die with it.
        self.spawn(what, ["ip", "netns", "exec", self.topo[side], "unshare", "--pid", "--fork", "--kill-child",
                           "--", "setpriv", f"--reuid={self.t.uid}", f"--regid={self.t.gid}", "--clear-groups",
                           "--", "env", "-i"] + [f"{k_}={v}" for k_, v in env.items()] +
                   ["sh", "-c", LAM_SCRIPT], {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, 120)

    def wait(self, timeout=150):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(p.poll() is None for p in self.procs.values()):
            time.sleep(0.05)
        hung = [w for w, p in self.procs.items() if p.poll() is None]
        self.stop()
        return hung

    def stop(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    def report(self):
        text = []
        for what in self.procs:
            out, err = self.output(what)
            text.append(f"--- {what} (exit {self.procs[what].returncode})\n{out}{err}")
        return "\n".join(text)


def check_job(job, topo, name, hung, programs):
    """Every process ended with status 0 within the time, the three ranks of
    `programs` (the outputs holding lam_check's lines) said ok, and nothing
    is left in the namespaces."""
    report = job.report()
    say(report)
    check(not hung, f"{name}: still running after 150 s: {', '.join(hung)}\n{report}")
    for what in job.procs:
        check(job.procs[what].returncode == 0, f"{name}: {what} exited {job.procs[what].returncode}\n{report}")
    lines = sorted(l for w in programs for l in job.output(w)[0].splitlines()
                   if l.startswith(("lam_check:", "FAIL")))
    want = sorted(f"lam_check: rank {i} of 3 ok" for i in range(3))
    check(lines == want, f"{name}: output {lines}, want {want}\n{report}")
    check_nothing_left(topo)


def run_lam_lam(t, topo, name):
    """LAM against LAM, laid out as gridmpi_first with LAM in G's place (1
    rank as client 0 in G, 2 ranks as client 1 in L): what LAM itself does
    where gridmpi stands."""
    job = Job(t, topo, name)
    try:
        job.start_server()
        job.start_lam(0, 1, job.address, what="lam0", side="G")
        job.start_lam(1, 2, job.address)
        hung = job.wait()
    finally:
        job.stop()
    check_job(job, topo, name, hung, ("lam0", "lam"))


def run_job(t, topo, name, gridmpi_client, record=None):
    """gridmpi (1 rank) as client gridmpi_client, LAM (2 ranks) as the other.
    With `record` (a directory; gridmpi as client 0 only), LAM's server
    connection and its IMPI connection to the gridmpi rank go through
    recording relays, and the bytes land in record/{lam-to-server,server-to-lam,lam-to-gridmpi,gridmpi-to-lam}.bin."""
    job = Job(t, topo, name)
    lam_client = 1 - gridmpi_client
    try:
        job.start_server()
        lam_server = job.address
        extra = {}
        if record:
            listener, relay = 47011, 47012
            job.start_relay("relay-server", 47010, int(job.address.split(":")[1]), 1)
            job.start_relay("relay-host", relay, listener, 1)
            lam_server = f"{G_ADDR}:47010"
            extra = {"IMPI_PORT_RANGE": f"{listener}:{listener}", "GRIDMPI_IMPI_ADVERTISE": f"{G_ADDR}:{relay}"}
        job.start_gridmpi(gridmpi_client, 1, lam_client, extra)
        job.start_lam(lam_client, 2, lam_server)
        hung = job.wait()
    finally:
        job.stop()
    if record:
        os.makedirs(record, exist_ok=True)
        for what, to in (("relay-server.0.up", "lam-to-server"), ("relay-server.0.down", "server-to-lam"),
                         ("relay-host.0.up", "lam-to-gridmpi"), ("relay-host.0.down", "gridmpi-to-lam")):
            src = os.path.join(job.dir, what)
            if os.path.exists(src):
                shutil.copy(src, os.path.join(record, to + ".bin"))
    check_job(job, topo, name, hung, ("gridmpi", "lam"))


def run_relay_job(t, topo, name, gridmpi_client):
    """gridmpi (1 rank, on P) as client gridmpi_client behind impi-relay in G,
    LAM (2 ranks, on L) as the other client.  P cannot reach L: that the
    job passes is the relay carrying both the server connection and the
    host connection between LAM's IMPI daemon and the gridmpi rank (LAM
    sees an ordinary IMPI host at the relay's public address)."""
    job = Job(t, topo, name)
    lam_client = 1 - gridmpi_client
    try:
        job.start_server()
        relay = job.start_impi_relay(gridmpi_client)
        unreachable = run(["ip", "netns", "exec", topo["P"], "ip", "route", "get", L_ADDR], timeout=10)
        check(unreachable.returncode != 0, f"P has a route to L: {unreachable.stdout.strip()}")
        job.start_gridmpi(gridmpi_client, 1, lam_client, side="P", server=relay)
        job.start_lam(lam_client, 2, job.address)
        hung = job.wait()
    finally:
        job.stop()
    check_job(job, topo, name, hung, ("gridmpi", "lam"))


CASES = {
    "lam_first": lambda t, topo: run_job(t, topo, "lam_first", 1),
    "gridmpi_first": lambda t, topo: run_job(t, topo, "gridmpi_first", 0),
    "lam_lam": lambda t, topo: run_lam_lam(t, topo, "lam_lam"),
    "relay_lam_first": lambda t, topo: run_relay_job(t, topo, "relay_lam_first", 1),
    "relay_gridmpi_first": lambda t, topo: run_relay_job(t, topo, "relay_gridmpi_first", 0),
}
DEFAULT = ["lam_first", "gridmpi_first", "lam_lam", "relay_lam_first", "relay_gridmpi_first"]


def main():
    global VERBOSE
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--record", metavar="DIR",
                    help="run gridmpi_first through recording relays and keep LAM's bytes in DIR "
                         "(how tests/impi/lam_recorded.py was made)")
    ap.add_argument("cases", nargs="*", help="run only these cases")
    a = ap.parse_args()
    if a.record:
        a.cases = ["gridmpi_first"]
        CASES["gridmpi_first"] = lambda t, topo: run_job(t, topo, "gridmpi_first", 0, os.path.abspath(a.record))
    VERBOSE = a.verbose
    names = a.cases or DEFAULT
    for n in names:
        if n not in CASES:
            print(f"unknown case {n}; cases: {' '.join(CASES)}")
            return 2
    if os.geteuid() != 0:
        print("SKIP: needs root (network namespaces, and a user to run LAM as)")
        return SKIP
    for tool in ("ip", "timeout", "unshare", "setpriv"):
        if not shutil.which(tool):
            print(f"SKIP: needs {tool}")
            return SKIP

    def interrupted(signo, _frame):
        for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(s, signal.SIG_IGN)
        raise SystemExit(f"interrupted by signal {signo}")

    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, interrupted)
    topo = Topology()
    t = None
    failed = 0
    try:
        topo.remove_stale()
        try:
            topo.build()
            t = Test(a.build)
        except Skip as e:
            print(f"SKIP: {e}")
            return SKIP
        except Fail as e:
            print(f"FAIL setup: {e}")
            return 1
        for name in names:
            start = time.monotonic()
            try:
                CASES[name](t, topo)
                print(f"PASS {name} ({time.monotonic() - start:.1f} s)", flush=True)
            except (Fail, subprocess.TimeoutExpired) as e:
                print(f"FAIL {name}: {e}", flush=True)
                failed += 1
                topo.kill_all()
    finally:
        topo.delete()
        if t:
            shutil.rmtree(t.tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
