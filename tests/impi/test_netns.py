#!/usr/bin/env python3
"""A multi-cluster job across network namespaces (root only; exit 77 when not
root or `ip netns` cannot be used).  Each cluster lives in its own namespace
with its own addresses, joined to the server's namespace by veth pairs;
the server's namespace routes between them:

    A  10.91.1.2 ----- 10.91.1.1  S  10.91.2.1 ----- 10.91.2.2  B
       10.91.3.2 ----- 10.91.3.1     10.91.4.1 ----- 10.91.4.2  C

S runs impi-server (-host 10.91.1.1) and forwards; A has a second network
(10.91.3.0/24) and routes only towards B's network, so nothing in A can
answer C; B has a default route through S; C's routes change per case.
Cluster A runs `mpirun -client 0`, B (or C) `mpirun -client 1`, 2 ranks each.

Cases (all by default, or name some):
  programs      tests/mpi/p2p_sendrecv.c and impi_coll.c over 2 + 2 ranks, KEY authentication
  addresses     while a job holds still: the IMPI connections, seen with `ss` from A and B, join
                10.91.1.2 and 10.91.2.2 (the addresses towards the server), never 127.0.0.1;
                mpirun's server connections come from those addresses (impi-server -verbose)
  network       IMPI_NETWORK=10.91.3.0 in A: A's ranks listen and are reached on 10.91.3.2
  port_range    IMPI_PORT_RANGE in A and B, IMPI_SERVER_PORT_RANGE in S: every listener in its range
  no_route      C reaches the server but has no route to A: one clear line at once, no hang
  silent        C's packets reach A but A cannot answer: the connect timeout
                (GRIDMPI_IMPI_CONNECT_TIMEOUT=3) names the missing host, no hang
  no_server     C has no route to the server: mpirun's "cannot reach impi-server" line

After every case no process is left in any of the namespaces.  Every
process runs under `timeout`; the namespaces (and with them the veth pairs)
are deleted on exit, also on failure or SIGTERM/SIGINT.

    test_netns.py --build BUILD_DIR [-v] [CASE...]
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
PREFIX = "gmnet"  # namespace names: gmnet<letter><pid of this test>

SERVER_ADDR = "10.91.1.1"
A_ADDR, A_ADDR2, B_ADDR, C_ADDR = "10.91.1.2", "10.91.3.2", "10.91.2.2", "10.91.4.2"

# Every rank exchanges 200000 ints (past any eager limit) with every other
# rank through a shift pattern and checks each value; an allreduce checks
# the sum.  With a directory argument each rank then writes DIR/ready.R and
# rank 0 waits (at most 30 s) for DIR/go before the final barrier, so that
# the test can look at the connections of a running job.
CHECK_PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void die(int rank, const char *what, long detail) {
  fprintf(stderr, "netns_check: rank %d: %s (%ld)\n", rank, what, detail);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv) {
  const int n = 200000;
  int rank, size, step, i, mine, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int *out = malloc(n * sizeof(int)), *in = malloc(n * sizeof(int));
  if (!out || !in) die(rank, "out of memory", 0);
  for (step = 1; step < size; ++step) {
    int to = (rank + step) % size, from = (rank + size - step) % size;
    for (i = 0; i < n; ++i) out[i] = rank * 1000003 + to * 7 + i;
    memset(in, 0, n * sizeof(int));
    MPI_Sendrecv(out, n, MPI_INT, to, step, in, n, MPI_INT, from, step, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (i = 0; i < n; ++i)
      if (in[i] != from * 1000003 + rank * 7 + i) die(rank, "wrong value from rank", from);
  }
  mine = rank + 1;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (sum != size * (size + 1) / 2) die(rank, "wrong allreduce sum", sum);
  printf("rank %d of %d ok\n", rank, size);
  fflush(stdout);
  if (argc > 1) {
    char path[4096];
    snprintf(path, sizeof path, "%s/ready.%d", argv[1], rank);
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
    if (rank == 0) {
      snprintf(path, sizeof path, "%s/go", argv[1]);
      for (i = 0; i < 600 && access(path, F_OK) != 0; ++i) usleep(50000);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
"""


class Fail(Exception):
    pass


class Skip(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Fail(message)


VERBOSE = False


def say(text):
    if VERBOSE:
        print("  " + text, flush=True)


def ip(*args, timeout=10):
    p = subprocess.run(["ip"] + list(args), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=timeout)
    if p.returncode != 0:
        raise Fail(f"ip {' '.join(args)}: {p.stderr.strip()}")
    return p.stdout


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
        tag = os.getpid()
        self.ns = {k: f"{PREFIX}{k}{tag}" for k in "SABC"}
        self.created = []

    def remove_stale(self):
        """Namespaces left by an earlier run of this test that was SIGKILLed."""
        try:
            names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            return
        for line in names.splitlines():
            m = re.match(rf"({PREFIX}[SABC](\d+))\b", line)
            if m and not pid_alive(int(m.group(2))):
                # What still runs in there was started by that run.
                for pid in self.pids_in(m.group(1)):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                self.delete_namespace(m.group(1))

    def __getitem__(self, k):
        return self.ns[k]

    def build(self):
        for k in "SABC":
            try:
                ip("netns", "add", self.ns[k])
            except Fail as e:
                if not self.created:
                    raise Skip(f"cannot create network namespaces here: {e}")
                raise
            self.created.append(self.ns[k])
            ip("-n", self.ns[k], "link", "set", "lo", "up")
        # name in S, name in the cluster, S's address, the cluster's address
        links = [("A", "sA1", "aS1", "10.91.1.1", A_ADDR), ("A", "sA2", "aS2", "10.91.3.1", A_ADDR2),
                 ("B", "sB", "bS", "10.91.2.1", B_ADDR), ("C", "sC", "cS", "10.91.4.1", C_ADDR)]
        for k, s_end, c_end, s_addr, c_addr in links:
            # Created straight inside the namespaces: nothing appears in the host's.
            ip("link", "add", s_end, "netns", self.ns["S"], "type", "veth", "peer", "name", c_end, "netns", self.ns[k])
            ip("-n", self.ns["S"], "addr", "add", s_addr + "/24", "dev", s_end)
            ip("-n", self.ns[k], "addr", "add", c_addr + "/24", "dev", c_end)
            ip("-n", self.ns["S"], "link", "set", s_end, "up")
            ip("-n", self.ns[k], "link", "set", c_end, "up")
        for setting in ("net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0"):
            p = subprocess.run(["ip", "netns", "exec", self.ns["S"], "sysctl", "-qw", setting],
                               capture_output=True, text=True, timeout=10)
            check(p.returncode == 0, f"sysctl {setting} in {self.ns['S']}: {p.stderr.strip()}")
        # A reaches B's network only (so it cannot answer C); B goes through S for everything.
        ip("-n", self.ns["A"], "route", "add", "10.91.2.0/24", "via", "10.91.1.1")
        ip("-n", self.ns["B"], "route", "add", "default", "via", "10.91.2.1")

    def set_c_routes(self, *routes):
        """C's routes besides its own network: (destination, gateway) pairs."""
        ip("-n", self.ns["C"], "route", "flush", "table", "main", "via", "10.91.4.1")
        for destination, gateway in routes:
            ip("-n", self.ns["C"], "route", "add", destination, "via", gateway)

    @staticmethod
    def pids_in(name):
        try:
            out = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True, timeout=10).stdout
        except subprocess.TimeoutExpired:
            return []
        return [int(word) for word in out.split()]

    def pids(self):
        return {pid: name for name in self.created for pid in self.pids_in(name)}

    def kill_all(self):
        """Everything still running in our namespaces was started by this test."""
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    @staticmethod
    def delete_namespace(name):
        subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=10)

    def delete(self):
        self.kill_all()
        for name in reversed(self.created):
            self.delete_namespace(name)
        self.created = []


def describe(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def check_nothing_left(topo):
    deadline = time.monotonic() + 5
    while True:
        left = topo.pids()
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if left:
        text = ", ".join(f"{pid} in {ns}: {describe(pid)}" for pid, ns in left.items())
        topo.kill_all()
        raise Fail(f"still running after the job ended: {text}")


class Job:
    """One impi-server in S and one mpirun -client per cluster, each under `timeout`."""

    def __init__(self, t, topo, name):
        self.t, self.topo, self.name = t, topo, name
        self.dir = os.path.join(t.tmp, "job-" + name)
        os.makedirs(self.dir, exist_ok=True)
        self.server = None
        self.clients = []
        self.started = time.monotonic()

    def env(self, extra):
        e = {k: v for k, v in os.environ.items()
             if not (k.startswith(("_YAMPI_", "GRIDMPI_", "IMPI_", "MPIEXEC_")) or k == "MPIROOT")}
        e.update(extra)
        return e

    def popen(self, ns, argv, extra_env, out, err, limit):
        return subprocess.Popen(["ip", "netns", "exec", ns, "timeout", str(limit)] + argv, env=self.env(extra_env),
                                cwd=self.dir, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                start_new_session=True)

    def start_server(self, clients, extra_env, args=()):
        out_file = os.path.join(self.dir, "server.out")
        self.server_err = os.path.join(self.dir, "server.err")
        with open(self.server_err, "wb") as err:
            self.server = self.popen(self.topo["S"], [self.t.impi_server, "-server", str(clients), "-host",
                                                      SERVER_ADDR, "-verbose", "-out", out_file] + list(args),
                                     extra_env, subprocess.DEVNULL, err, 90)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and self.server.poll() is None:
            if os.path.exists(out_file):
                with open(out_file) as f:
                    line = f.readline().strip()
                if line:
                    say(f"impi-server in {self.topo['S']}: {line}")
                    self.address = line
                    return line
            time.sleep(0.02)
        raise Fail(f"impi-server printed no address (exit {self.server.poll()}): {self.server_log()}")

    def server_log(self):
        with open(self.server_err, errors="replace") as f:
            return f.read()

    def start_client(self, ns, k, np_, program, extra_env, limit=60):
        out = os.path.join(self.dir, f"client{k}.out")
        err = os.path.join(self.dir, f"client{k}.err")
        with open(out, "wb") as o, open(err, "wb") as e:
            p = self.popen(ns, [self.t.mpirun, "-client", str(k), self.address, "-np", str(np_)] + program,
                           extra_env, o, e, limit)
        p.out_path, p.err_path, p.ns = out, err, ns
        self.clients.append(p)
        return p

    def wait(self, timeout=60, with_server=True):
        """Waits for every mpirun, then the server; returns (results, server status, seconds
        from the start of the job to the end of the last mpirun)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(p.poll() is None for p in self.clients):
            time.sleep(0.02)
        elapsed = time.monotonic() - self.started
        hung = [p for p in self.clients if p.poll() is None]
        for p in hung:
            p.send_signal(signal.SIGTERM)  # timeout(1) passes it on to mpirun
        server_status = None
        if self.server and with_server:
            try:
                server_status = self.server.wait(timeout=max(1.0, deadline + 10 - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.server.send_signal(signal.SIGTERM)
                server_status = "hung"
        results = []
        for p in self.clients:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            with open(p.out_path, errors="replace") as f:
                out = f.read()
            with open(p.err_path, errors="replace") as f:
                err = f.read()
            results.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
        check(not hung, f"{self.name}: mpirun still running after {timeout} s: " +
              "; ".join(f"{r.args[3]}: {r.stderr.strip()}" for r in results))
        return results, server_status, elapsed

    def stop(self):
        for p in self.clients + ([self.server] if self.server else []):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.clients + ([self.server] if self.server else []):
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


class Test:
    def __init__(self, build):
        self.build = os.path.abspath(build)
        self.bin = os.path.join(self.build, "bin")
        self.mpirun = os.path.join(self.bin, "mpirun")
        self.impi_server = os.path.join(self.bin, "impi-server")
        self.mpicc = os.path.join(self.bin, "mpicc")
        for path in (self.mpirun, self.impi_server, self.mpicc):
            if not os.path.exists(path):
                raise Skip(f"{path} is not built")
        self.tmp = tempfile.mkdtemp(prefix="gridmpi-netns-")
        os.chmod(self.tmp, 0o755)
        self.programs = {}

    def program(self, name):
        """Compiles tests/mpi/<name>.c, or the embedded check program, once."""
        if name in self.programs:
            return self.programs[name]
        exe = os.path.join(self.tmp, name)
        mpi_tests = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "mpi")
        if name == "netns_check":
            source = exe + ".c"
            with open(source, "w") as f:
                f.write(CHECK_PROGRAM)
        else:
            source = os.path.join(mpi_tests, name + ".c")
        p = subprocess.run([self.mpicc, "-O1", "-Wall", "-pthread", "-I", mpi_tests, "-o", exe, source],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"mpicc {source}: {p.stderr}")
        self.programs[name] = exe
        return exe


def check_success(job, results, server_status, expect_ranks):
    for k, r in enumerate(results):
        check(r.returncode == 0, f"{job.name}: cluster {k} exit {r.returncode}: {r.stderr.strip()}")
    check(server_status == 0, f"{job.name}: impi-server exit {server_status}: {job.server_log()}")
    if expect_ranks is not None:
        lines = sorted(l for r in results for l in r.stdout.splitlines() if l.startswith("rank "))
        want = sorted(f"rank {i} of {expect_ranks} ok" for i in range(expect_ranks))
        check(lines == want, f"{job.name}: output {lines}, want {want}")


AUTH = {"IMPI_AUTH_NONE": "1"}
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def programs(t, topo):
    auth = {"IMPI_AUTH_KEY": "8070605040302010"}
    for name in ("p2p_sendrecv", "impi_coll"):
        exe = t.program(name)
        job = Job(t, topo, name)
        try:
            job.start_server(2, auth)
            job.start_client(topo["A"], 0, 2, [exe], auth)
            job.start_client(topo["B"], 1, 2, [exe], auth)
            results, server_status, elapsed = job.wait(90)
        finally:
            job.stop()
        check_success(job, results, server_status, None)
        say(f"{name}: 2 + 2 ranks in {elapsed:.1f} s")
        check_nothing_left(topo)


def sockets(ns, state, program):
    """(local, peer) address:port pairs of `program`'s TCP sockets in namespace ns."""
    p = subprocess.run(["ip", "netns", "exec", ns, "ss", "-Htnp", "state", state], capture_output=True,
                       text=True, timeout=10)
    check(p.returncode == 0, f"ss in {ns}: {p.stderr.strip()}")
    found = []
    for line in p.stdout.splitlines():
        if f'(("{program}"' not in line and f'),("{program}"' not in line:
            continue
        fields = line.split()
        # -H with a state filter: Recv-Q Send-Q Local Peer Process
        found.append((fields[2], fields[3]))
    return found


def split_address(text):
    host, port = text.rsplit(":", 1)
    return host, int(port)


def observed_job(t, topo, name, a_env, b_env, s_env=None, server_args=()):
    """Runs the check program 2 + 2 in A and B, holding it while `ss` looks.
    Returns {namespace letter: {"listen": [...], "estab": [...]}} and the job."""
    exe = t.program("netns_check")
    job = Job(t, topo, name)
    hold = os.path.join(job.dir, "hold")
    os.mkdir(hold)
    seen = {}
    try:
        job.start_server(2, dict(AUTH, **(s_env or {})), server_args)
        job.start_client(topo["A"], 0, 2, [exe, hold], dict(AUTH, **a_env))
        job.start_client(topo["B"], 1, 2, [exe, hold], dict(AUTH, **b_env))
        deadline = time.monotonic() + 30
        while len([f for f in os.listdir(hold) if f.startswith("ready.")]) < 4:
            check(time.monotonic() < deadline and all(p.poll() is None for p in job.clients),
                  f"{name}: the ranks did not all get past the exchange")
            time.sleep(0.05)
        for k in "AB":
            seen[k] = {"listen": sockets(topo[k], "listening", "netns_check"),
                       "estab": sockets(topo[k], "established", "netns_check"),
                       "mpirun": sockets(topo[k], "established", "mpirun")}
            say(f"{name}: in {topo[k]}: {seen[k]}")
        with open(os.path.join(hold, "go"), "w"):
            pass
        results, server_status, elapsed = job.wait(60)
    finally:
        job.stop()
    check_success(job, results, server_status, 4)
    check_nothing_left(topo)
    say(f"{name}: 2 + 2 ranks in {elapsed:.1f} s")
    return seen, job


def impi_connections(seen, mine, theirs_prefixes):
    """The established sockets of the ranks in one cluster whose peer is in the other cluster."""
    return [(split_address(l), split_address(p)) for l, p in seen[mine]["estab"]
            if split_address(p)[0].startswith(theirs_prefixes)]


def check_addresses(name, seen, a_addr, a_ports=None, b_ports=None, server_port=None):
    a_side = impi_connections(seen, "A", ("10.91.2.",))
    b_side = impi_connections(seen, "B", ("10.91.1.", "10.91.3."))
    # Each of A's 2 ranks is connected to each of B's 2 ranks.
    check(len(a_side) == 4 and len(b_side) == 4, f"{name}: want 4 IMPI connections seen from each side: {seen}")
    for (local, peer) in a_side:
        check(local[0] == a_addr and peer[0] == B_ADDR, f"{name}: A's IMPI connection {local} - {peer}")
    for (local, peer) in b_side:
        check(local[0] == B_ADDR and peer[0] == a_addr, f"{name}: B's IMPI connection {local} - {peer}")
    # The higher host (B) connects to A's listener: A's side is the listening port.
    check({l for l, _ in a_side} == {p for _, p in b_side}, f"{name}: the two sides disagree: {a_side} {b_side}")
    listeners = {k: [split_address(l) for l, _ in seen[k]["listen"] if not l.startswith("127.")] for k in "AB"}
    a_listen = {x for x in listeners["A"] if x[0] == a_addr}
    check({l for l, _ in a_side} <= a_listen, f"{name}: A's IMPI connections are not on its listeners {a_listen}")
    for k, ports in (("A", a_ports), ("B", b_ports)):
        impi_listen = [x for x in listeners[k] if x[0] in (a_addr, B_ADDR)]
        check(len(impi_listen) >= 2, f"{name}: want an IMPI listener per rank in {k}: {listeners[k]}")
        if ports:
            for _, port in impi_listen:
                check(ports[0] <= port <= ports[1], f"{name}: {k} listens on {port}, outside {ports}")
    # No IMPI traffic over the loopback: every socket of a rank towards the other cluster is above.
    for k in "AB":
        for local, peer in seen[k]["estab"]:
            lh, ph = split_address(local)[0], split_address(peer)[0]
            check(lh.startswith("127.") == ph.startswith("127."), f"{name}: odd connection {local} - {peer} in {k}")
    # mpirun's server connection comes from the cluster's address.
    for k, own in (("A", A_ADDR), ("B", B_ADDR)):
        to_server = [(l, p) for l, p in seen[k]["mpirun"] if split_address(p)[0] == SERVER_ADDR]
        check(len(to_server) == 1 and split_address(to_server[0][0])[0] == own,
              f"{name}: mpirun in {k} is not connected to the server from {own}: {seen[k]['mpirun']}")
        if server_port:
            check(split_address(to_server[0][1])[1] == server_port, f"{name}: server port {to_server}")


@case
def addresses(t, topo):
    seen, job = observed_job(t, topo, "addresses", {}, {})
    check_addresses("addresses", seen, A_ADDR)
    log = job.server_log()
    for k, addr in ((0, A_ADDR), (1, B_ADDR)):
        check(re.search(rf"\b{re.escape(addr)}:\d+", log) and f"client {k}" in log,
              f"addresses: impi-server -verbose does not show client {k} from {addr}: {log}")


@case
def network(t, topo):
    # Without IMPI_NETWORK, A would use 10.91.1.2 (towards the server; see `addresses`).
    seen, _ = observed_job(t, topo, "network", {"IMPI_NETWORK": "10.91.3.0"}, {})
    check_addresses("network", seen, A_ADDR2)


@case
def port_range(t, topo):
    a_ports, b_ports, s_ports = (47100, 47103), (47200, 47203), (47300, 47301)
    seen, job = observed_job(t, topo, "port_range", {"IMPI_PORT_RANGE": "%d:%d" % a_ports},
                             {"IMPI_PORT_RANGE": "%d:%d" % b_ports},
                             {"IMPI_SERVER_PORT_RANGE": "%d:%d" % s_ports})
    server_port = split_address(job.address)[1]
    check(s_ports[0] <= server_port <= s_ports[1], f"port_range: impi-server printed {job.address}")
    check_addresses("port_range", seen, A_ADDR, a_ports, b_ports, server_port)


def failing_job(t, topo, name, c_env, expect, limit):
    """A in A (client 0) and C in C (client 1); C cannot reach A.  Both fail, with one
    mpirun line, within `limit` seconds; the server ends the job."""
    exe = t.program("netns_check")
    job = Job(t, topo, name)
    env = dict(AUTH, GRIDMPI_IMPI_CONNECT_TIMEOUT="3")
    try:
        job.start_server(2, AUTH)
        job.start_client(topo["A"], 0, 2, [exe], env)
        job.start_client(topo["C"], 1, 2, [exe], dict(env, **c_env))
        results, server_status, elapsed = job.wait(limit + 20)
    finally:
        job.stop()
    for k, r in enumerate(results):
        say(f"{name}: cluster {k} exit {r.returncode}: {r.stderr.strip()}")
    say(f"{name}: server exit {server_status}: {job.server_log().strip()}")
    check(all(r.returncode not in (0, None) for r in results), f"{name}: exits {[r.returncode for r in results]}")
    check(server_status == 1, f"{name}: impi-server exit {server_status}: {job.server_log()}")
    text = results[0].stderr + results[1].stderr
    check(re.search(expect, text), f"{name}: no line matching {expect!r} in {text!r}")
    check(elapsed < limit, f"{name}: took {elapsed:.1f} s (limit {limit} s)")
    for k, r in enumerate(results):
        lines = [l for l in r.stderr.splitlines() if l.startswith("mpirun: ")]
        check(len(lines) == 1, f"{name}: cluster {k}: want one mpirun line, got {lines!r}")
    check_nothing_left(topo)
    return elapsed


@case
def no_route(t, topo):
    topo.set_c_routes((SERVER_ADDR + "/32", "10.91.4.1"))
    try:
        elapsed = failing_job(t, topo, "no_route", {},
                              r"rank [23]\b.*cannot connect to .*10\.91\.1\.2.*Network is unreachable", 10)
    finally:
        topo.set_c_routes()
    say(f"no_route: failed in {elapsed:.1f} s")


@case
def silent(t, topo):
    topo.set_c_routes(("10.91.1.0/24", "10.91.4.1"))
    try:
        elapsed = failing_job(t, topo, "silent", {}, r"(no answer within 3 s|not all made within 3 s)", 15)
    finally:
        topo.set_c_routes()
    say(f"silent: failed in {elapsed:.1f} s")


@case
def no_server(t, topo):
    topo.set_c_routes()
    exe = t.program("netns_check")
    job = Job(t, topo, "no_server")
    try:
        job.start_server(2, AUTH)
        job.start_client(topo["C"], 1, 2, [exe],
                         dict(AUTH, IMPI_SERVER_CONNECT_RETRY="1", IMPI_SERVER_CONNECT_SLEEP="0.2"))
        # The server waits for clients that never come: job.stop() ends it.
        results, _, elapsed = job.wait(30, with_server=False)
    finally:
        job.stop()
    r = results[0]
    lines = [l for l in r.stderr.splitlines() if l.startswith("mpirun: ")]
    check(r.returncode == 255, f"no_server: exit {r.returncode}: {r.stderr}")
    check(len(lines) == 1 and re.match(rf"mpirun: cannot reach impi-server at {re.escape(job.address)}: "
                                       r"Network is unreachable \(start impi-server first", lines[0]),
          f"no_server: {r.stderr!r}")
    check(elapsed < 10, f"no_server: took {elapsed:.1f} s")
    check_nothing_left(topo)
    say(f"no_server: failed in {elapsed:.1f} s: {lines[0]}")


def main():
    global VERBOSE
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("cases", nargs="*", help="run only these cases")
    a = ap.parse_args()
    VERBOSE = a.verbose
    names = a.cases or list(CASES)
    for n in names:
        if n not in CASES:
            print(f"unknown case {n}; cases: {' '.join(CASES)}")
            return 2
    if os.geteuid() != 0:
        print("SKIP: needs root (network namespaces)")
        return SKIP
    if not shutil.which("ip") or not shutil.which("ss") or not shutil.which("timeout"):
        print("SKIP: needs ip, ss and timeout")
        return SKIP
    try:
        t = Test(a.build)
    except Skip as e:
        print(f"SKIP: {e}")
        return SKIP

    def interrupted(signo, _frame):
        # timeout(1) sends the signal twice (to us and to its process group):
        # a second one must not cut the clean-up short.
        for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(s, signal.SIG_IGN)
        raise SystemExit(f"interrupted by signal {signo}")

    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, interrupted)
    topo = Topology()
    failed = 0
    try:
        topo.remove_stale()
        try:
            topo.build()
        except Skip as e:
            print(f"SKIP: {e}")
            return SKIP
        for name in names:
            start = time.monotonic()
            try:
                CASES[name](t, topo)
                print(f"PASS {name} ({time.monotonic() - start:.1f} s)", flush=True)
            except Fail as e:
                print(f"FAIL {name}: {e}", flush=True)
                failed += 1
                topo.kill_all()
            except subprocess.TimeoutExpired as e:
                print(f"FAIL {name}: timed out: {e}", flush=True)
                failed += 1
                topo.kill_all()
    finally:
        topo.delete()
        shutil.rmtree(t.tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
