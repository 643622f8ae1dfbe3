#!/usr/bin/env python3
"""IMPI over TLS (impi.tls; impi/tls.hpp): impi-server, mpirun -client and the
host connections with mutual certificate authentication.  Certificates are
made at test time by make_test_certs.sh (the openssl command; skipped
without it).

* programs: a 2+2 job with TLS everywhere runs real MPI programs (a marker
  program with long messages, tests/mpi/p2p_blocking.c, coll_bcast.c);
* encrypted: a 1+1 job whose host connection goes through a recording relay
  (impi.advertise): the bytes start with a TLS handshake record and never
  contain the marker the program sends (the same run without TLS does);
* server_tls_client_plain / client_tls_server_plain: one clear line on each
  side, mpirun exits non-zero, no hang; the server refuses that connection
  alone and a right cluster then completes the job;
* other_ca: an mpirun whose certificate another CA signed is refused alone; ranks
  of one cluster with such a certificate: "certificate verify failed", the
  job ends;
* bad_files: a missing certificate, an expired one, a key of another
  certificate: one line naming the parameter, nothing started.

    test_tls.py --build BUILD_DIR [CASE...]
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from client_common import Fail, Skip, check, main, mpirun_lines  # noqa: E402

CASES = {}
AUTH = {"IMPI_AUTH_KEY": "424242"}
MARKER = b"GRIDMPI-PLAINTEXT-MARKER-7f3a"


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def certs(env):
    if not shutil.which("openssl"):
        raise Skip("the openssl command is not installed (scripts/install-deps)")
    d = os.path.join(env.tmp, "certs")
    if not os.path.exists(os.path.join(d, "site.pem")):
        p = subprocess.run([os.path.join(HERE, "make_test_certs.sh"), d], capture_output=True, text=True,
                           timeout=60)
        check(p.returncode == 0, f"make_test_certs.sh: {p.stderr}")
    return d


def tls_env(d, cert="site", ca="ca"):
    return {"GRIDMPI_IMPI_TLS": "1", "GRIDMPI_IMPI_TLS_CERT": os.path.join(d, cert + ".pem"),
            "GRIDMPI_IMPI_TLS_KEY": os.path.join(d, cert + ".key"), "GRIDMPI_IMPI_TLS_CA": os.path.join(d, ca + ".pem")}


class Server:
    def __init__(self, env, extra, clients=2):
        if not os.path.exists(env.impi_server):
            raise Skip(f"{env.impi_server} is not built")
        self.proc = subprocess.Popen([env.impi_server, "-server", str(clients), "-host", "127.0.0.1"],
                                     env=env.env(dict(AUTH, **extra)), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if not re.fullmatch(r"127\.0\.0\.1:\d+", line):
            self.proc.kill()
            raise Fail(f"impi-server printed {line!r}: {self.proc.stderr.read()}")
        self.address = line

    def wait(self, timeout=30):
        try:
            _, err = self.proc.communicate(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.communicate()
        return self.proc.returncode, err


def run_job(env, server, programs, extras, np_=(2, 2), timeout=90):
    """One mpirun -client per cluster at once; [(status, out, err)], seconds."""
    start = time.monotonic()
    procs = [env.start(["-client", str(k), server.address, "-np", str(np_[k])] + programs[k], dict(AUTH, **extras[k]))
             for k in range(len(programs))]
    results = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=timeout)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        results.append((p.returncode, out, err))
    return results, time.monotonic() - start


MARKER_PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* Every rank sends the marker text to its partner in the other cluster,
   short and long (1 MiB of repeated marker), then an allreduce. */
int main(int argc, char** argv) {
  int rank, size, n = 1 << 20, i, sum = 0, one;
  const char* m = "MARKER";
  size_t ml = strlen(m);
  char small[64], got[64];
  char *big = malloc(n), *back = malloc(n);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (i = 0; i < n; ++i) big[i] = m[i % ml];
  snprintf(small, sizeof small, "%s from %d", m, rank);
  int partner = (rank + size / 2) % size;
  MPI_Sendrecv(small, 64, MPI_CHAR, partner, 1, got, 64, MPI_CHAR, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(big, n, MPI_CHAR, partner, 2, back, n, MPI_CHAR, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (memcmp(big, back, n) != 0 || strncmp(got, m, ml) != 0) {
    printf("rank %d: wrong data\n", rank);
    return 1;
  }
  one = rank + 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank %d of %d sum %d ok\n", rank, size, sum);
  MPI_Finalize();
  return 0;
}
""".replace("MARKER", MARKER.decode())


def build(env, name, source=None, path=None):
    exe = os.path.join(env.tmp, name)
    if os.path.exists(exe):
        return exe
    if source is not None:
        path = os.path.join(env.tmp, name + ".c")
        with open(path, "w") as f:
            f.write(source)
    c = subprocess.run([os.path.join(env.bin, "mpicc"), "-I", os.path.join(REPO, "tests", "mpi"), "-o", exe, path],
                       capture_output=True, text=True, timeout=180)
    check(c.returncode == 0, f"mpicc {path}: {c.stderr.strip()[:800]}")
    return exe


@case
def programs(env):
    d = certs(env)
    tls = tls_env(d)
    progs = [build(env, "marker", MARKER_PROGRAM),
             build(env, "p2p_blocking", path=os.path.join(REPO, "tests", "mpi", "p2p_blocking.c")),
             build(env, "coll_bcast", path=os.path.join(REPO, "tests", "mpi", "coll_bcast.c"))]
    for exe in progs:
        server = Server(env, tls)
        results, elapsed = run_job(env, server, [[exe], [exe]], [tls, tls])
        status, err = server.wait()
        for k, (code, out, e) in enumerate(results):
            check(code == 0, f"{os.path.basename(exe)}: cluster {k} exit {code}: {e[-2000:]}")
        check(status == 0, f"{os.path.basename(exe)}: impi-server exit {status}: {err}")
        if exe == progs[0]:
            lines = sorted(results[0][1].splitlines() + results[1][1].splitlines())
            check(lines == [f"rank {r} of 4 sum 10 ok" for r in range(4)], f"got {lines}")


class Relay:
    """Forwards one TCP connection 127.0.0.1:port -> target, recording both directions."""

    def __init__(self, target_port):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(60)
        self.port = self.sock.getsockname()[1]
        self.target = target_port
        self.up = bytearray()    # connecting side -> listener
        self.down = bytearray()  # listener -> connecting side
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def pump(self, a, b, record):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                record += data
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def run(self):
        try:
            a, _ = self.sock.accept()
        except OSError:
            return
        b = socket.create_connection(("127.0.0.1", self.target), timeout=10)
        a.settimeout(None)
        b.settimeout(None)
        t = threading.Thread(target=self.pump, args=(b, a, self.down), daemon=True)
        t.start()
        self.pump(a, b, self.up)
        t.join(30)
        a.close()
        b.close()

    def close(self):
        self.thread.join(10)
        self.sock.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def relayed_run(env, extra):
    """A 1+1 marker job whose host connection goes through a Relay."""
    exe = build(env, "marker", MARKER_PROGRAM)
    listen = free_port()
    relay = Relay(listen)
    c0 = dict(extra, IMPI_PORT_RANGE=f"{listen}:{listen}", GRIDMPI_IMPI_ADVERTISE=f"127.0.0.1:{relay.port}")
    server = Server(env, extra)
    results, _ = run_job(env, server, [[exe], [exe]], [c0, extra], np_=(1, 1))
    status, err = server.wait()
    relay.close()
    for k, (code, out, e) in enumerate(results):
        check(code == 0, f"cluster {k} exit {code}: {e[-2000:]}")
    check(status == 0, f"impi-server exit {status}: {err}")
    return bytes(relay.up), bytes(relay.down)


@case
def encrypted(env):
    d = certs(env)
    up, down = relayed_run(env, {})
    check(MARKER in up and MARKER in down, "the plain run must show the marker (is the relay in the path?)")
    up, down = relayed_run(env, tls_env(d))
    check(len(up) > 1 << 20 and len(down) > 1 << 20, f"too few bytes recorded: {len(up)} / {len(down)}")
    check(up[:2] == b"\x16\x03", f"the connecting side's stream starts with {up[:8].hex()}, not a TLS handshake")
    check(down[:2] == b"\x16\x03", f"the listener's stream starts with {down[:8].hex()}, not a TLS handshake")
    check(MARKER not in up and MARKER not in down, "the marker crossed the wire in clear text")
    check(MARKER[:12] not in up and MARKER[:12] not in down, "part of the marker crossed the wire in clear text")


def one_cluster(env, server, extra, timeout=30):
    exe = env.prog
    results, elapsed = run_job(env, server, [[exe, "impi"]], [extra], np_=(1,), timeout=timeout)
    return results[0], elapsed


def server_line(err):
    lines = [l for l in err.splitlines() if l.startswith("impi-server: ")]
    check(len(lines) == 1, f"expected one impi-server line, got {lines!r}")
    return lines[0]


def mpirun_line(err):
    lines = mpirun_lines(err)
    check(len(lines) == 1, f"expected one mpirun line, got {lines!r} (stderr {err[-1500:]!r})")
    return lines[0]


def refused_then_job_completes(env, server, good_extra):
    """The server refused the connection alone: a right cluster then runs the
    job (-server 1) to the end; returns the server's one line (the refusal)."""
    check(server.proc.poll() is None, "a refused connection ended impi-server")
    (code, out, err), elapsed = one_cluster(env, server, good_extra)
    if code != 0:
        server.proc.terminate()
    status, serr = server.wait()
    check(code == 0 and status == 0, f"the job after the refusal: mpirun exit {code} ({err[-1500:]}), "
                                     f"impi-server exit {status} ({serr})")
    sline = server_line(serr)
    check("refused, only this connection is closed; the job goes on (0 of 1 clients joined)" in sline, sline)
    return sline


@case
def server_tls_client_plain(env):
    d = certs(env)
    server = Server(env, tls_env(d), clients=1)
    (code, out, err), elapsed = one_cluster(env, server, {})
    line = mpirun_line(err)
    check("speaks TLS" in line and "impi.tls" in line, line)
    check(code == 255 and elapsed < 15, f"mpirun exit {code} after {elapsed:.1f} s")
    sline = refused_then_job_completes(env, server, tls_env(d))
    check("does not speak TLS" in sline and "impi.tls" in sline, sline)


@case
def client_tls_server_plain(env):
    d = certs(env)
    server = Server(env, {}, clients=1)
    (code, out, err), elapsed = one_cluster(env, server, tls_env(d))
    line = mpirun_line(err)
    check("TLS handshake" in line and "impi.tls" in line, line)
    check(code == 255 and elapsed < 15, f"mpirun exit {code} after {elapsed:.1f} s")
    sline = refused_then_job_completes(env, server, {})
    check("speaks TLS" in sline and "0x16" in sline, sline)


def wrapper(env, name, exe, extra):
    """A program that runs `exe` with `extra` in its environment (the ranks' settings differ from mpirun's)."""
    path = os.path.join(env.tmp, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n")
        for k, v in extra.items():
            f.write(f"export {k}='{v}'\n")
        f.write(f"exec '{exe}' \"$@\"\n")
    os.chmod(path, 0o755)
    return path


@case
def other_ca(env):
    d = certs(env)
    # mpirun with a certificate of another CA: the server's verification fails.
    server = Server(env, tls_env(d), clients=1)
    (code, out, err), elapsed = one_cluster(env, server, tls_env(d, cert="other"))
    line = mpirun_line(err)
    check("TLS" in line and "certificate" in line, line)
    check(code == 255 and elapsed < 15, f"exit {code} after {elapsed:.1f} s")
    sline = refused_then_job_completes(env, server, tls_env(d))
    check("certificate verify failed" in sline, sline)
    # The server's certificate from another CA: mpirun's verification fails.
    server = Server(env, tls_env(d, cert="other", ca="other-ca"), clients=1)
    (code, out, err), elapsed = one_cluster(env, server, tls_env(d))
    check(server.proc.poll() is None, "a refused connection ended impi-server")
    server.proc.terminate()
    status, serr = server.wait()
    # (Its line about the failed handshake may come after the SIGTERM.)
    check(status == 1 and "the job is over" not in serr, f"impi-server exit {status}: {serr}")
    line = mpirun_line(err)
    check("certificate verify failed" in line and "impi.tls_ca" in line, line)
    check(code == 255 and elapsed < 15, f"mpirun exit {code} after {elapsed:.1f} s")
    # The ranks of cluster 0 (the listeners) with such a certificate: cluster
    # 1's ranks reject them, the job ends.
    exe = build(env, "marker", MARKER_PROGRAM)
    bad = wrapper(env, "marker-other-ca", exe, {"GRIDMPI_IMPI_TLS_CERT": os.path.join(d, "other.pem"),
                                               "GRIDMPI_IMPI_TLS_KEY": os.path.join(d, "other.key")})
    tls = tls_env(d)
    server = Server(env, tls)
    results, elapsed = run_job(env, server, [[bad], [exe]], [tls, tls], timeout=60)
    status, serr = server.wait()
    everything = results[0][2] + results[1][2]
    check("certificate verify failed: unable to get local issuer certificate" in results[1][2],
          f"cluster 1: {results[1][2][-2000:]}")
    check(all(code != 0 for code, _, _ in results) and status == 1,
          f"exits {[r[0] for r in results]} server {status}: {everything[-2000:]}")
    check(elapsed < 30, f"took {elapsed:.1f} s")
    # And the ranks of cluster 1 (the connecting side) with it: cluster 0 rejects them.
    bad1 = wrapper(env, "marker-other-ca-1", exe, {"GRIDMPI_IMPI_TLS_CERT": os.path.join(d, "other.pem"),
                                                  "GRIDMPI_IMPI_TLS_KEY": os.path.join(d, "other.key")})
    server = Server(env, tls)
    results, elapsed = run_job(env, server, [[exe], [bad1]], [tls, tls], timeout=60)
    status, serr = server.wait()
    everything = results[0][2] + results[1][2]
    check("certificate verify failed" in results[0][2], f"cluster 0: {results[0][2][-2000:]}")
    check("rejected this side's certificate" in results[1][2], f"cluster 1: {results[1][2][-2000:]}")
    check(all(code != 0 for code, _, _ in results) and status == 1,
          f"exits {[r[0] for r in results]} server {status}: {everything[-2000:]}")
    check(elapsed < 30, f"took {elapsed:.1f} s")


@case
def bad_files(env):
    d = certs(env)
    missing = dict(tls_env(d), GRIDMPI_IMPI_TLS_CERT="/nonexistent/site.pem")
    p = subprocess.run([env.impi_server, "-server", "1"], env=env.env(dict(AUTH, **missing)), capture_output=True,
                       text=True, timeout=30)
    line = server_line(p.stderr)
    check(p.returncode == 2, f"impi-server exit {p.returncode}")
    check("impi.tls_cert: cannot read /nonexistent/site.pem: No such file or directory" in line and
          "GRIDMPI_IMPI_TLS_CERT" in line, line)
    check(p.stdout == "", f"impi-server printed {p.stdout!r}")
    for extra, needle in ((dict(tls_env(d), GRIDMPI_IMPI_TLS_KEY=""), "impi.tls is on but impi.tls_key is not set"),
                          (tls_env(d, cert="expired"), "expired on"),
                          (dict(tls_env(d), GRIDMPI_IMPI_TLS_KEY=os.path.join(d, "other.key")),
                           "does not belong to the certificate")):
        p = subprocess.run([env.impi_server, "-server", "1"], env=env.env(dict(AUTH, **extra)), capture_output=True,
                           text=True, timeout=30)
        line = server_line(p.stderr)
        check(p.returncode == 2 and needle in line, f"exit {p.returncode}: {line}")
    # mpirun: the same line, before any rank starts (a usage error: exit 2).
    server = Server(env, tls_env(d), clients=1)
    (code, out, err), elapsed = one_cluster(env, server, missing)
    server.proc.terminate()
    server.wait()
    line = mpirun_line(err)
    check("impi.tls_cert: cannot read /nonexistent/site.pem" in line, line)
    check(code == 2 and elapsed < 15, f"mpirun exit {code} after {elapsed:.1f} s")


if __name__ == "__main__":
    sys.exit(main(CASES))
