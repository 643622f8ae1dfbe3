#!/usr/bin/env python3
"""A stray mpirun -client does not end someone else's job.

A real 2 + 2 process MPI job through bin/impi-server; while it runs, other
mpirun -client ask for a client number that is already taken (0 while the
server still waits for client 1, 1 while the job runs) or out of range (5),
and one comes with a wrong IMPI_AUTH_KEY.  Each stray fails alone, within
seconds, with one line saying what happened and the fix; the server logs one
line per refusal; the job completes (both clusters exit 0, the server exits 0,
the program's results are right).

    test_stray_client.py --build BUILD_DIR [CASE...]
"""
import os
import queue
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from client_common import Fail, Skip, check, expect_one_line, finish, main  # noqa: E402

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# World rank 0 waits (at most 60 s) for the file argv[1] between two
# collectives, so that strays can be sent while the job is running.
PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char** argv) {
  int rank, size, one, sum = 0, go = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("running\n");
    fflush(stdout);
    for (int i = 0; i < 6000 && access(argv[1], F_OK) != 0; ++i) usleep(10000);
    go = access(argv[1], F_OK) == 0;
  }
  MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
  one = rank + 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank %d of %d sum %d go %d\n", rank, size, sum, go);
  MPI_Finalize();
  return 0;
}
"""


class VerboseServer:
    """bin/impi-server -server M -verbose on the loopback; its stderr lines
    are collected by a thread so that the test can wait for one."""

    def __init__(self, env, clients, auth):
        if not os.path.exists(env.impi_server):
            raise Skip(f"{env.impi_server} is not built")
        self.proc = subprocess.Popen([env.impi_server, "-server", str(clients), "-host", "127.0.0.1", "-verbose"],
                                     env=env.env(auth), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if not re.fullmatch(r"127\.0\.0\.1:\d+", line):
            self.proc.kill()
            raise Fail(f"impi-server printed {line!r}: {self.proc.stderr.read()}")
        self.address = line
        self.lines = []
        self._new = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stderr:
            self._new.put(line.rstrip("\n"))
        self._new.put(None)

    def _drain(self, timeout):
        line = self._new.get(timeout=timeout)
        if line is None:
            raise Fail(f"impi-server exited ({self.proc.poll()}); its output: {self.lines}")
        self.lines.append(line)

    def wait_for(self, pattern, timeout=60):
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for line in self.lines[seen:]:
                if re.search(pattern, line):
                    return line
            seen = len(self.lines)
            left = deadline - time.monotonic()
            if left <= 0:
                raise Fail(f"impi-server did not log {pattern!r} within {timeout} s: {self.lines}")
            try:
                self._drain(left)
            except queue.Empty:
                pass

    def wait(self, timeout=30):
        try:
            self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(timeout=5)
        while not self._new.empty():
            line = self._new.get()
            if line is not None:
                self.lines.append(line)
        return self.proc.returncode

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def stray(env, server, args, auth, server_says, mpirun_says):
    """One stray mpirun: it fails alone, quickly, and both sides say why."""
    p = env.run(args, auth, timeout=60)
    check(p.returncode == 255, f"stray {args[:2]}: exit {p.returncode}: {p.stderr!r}")
    check(p.elapsed < 30, f"stray {args[:2]} took {p.elapsed:.1f} s")
    expect_one_line(p, mpirun_says)
    server.wait_for(server_says, timeout=10)
    check(server.proc.poll() is None, f"a stray ended impi-server: {server.lines}")


def build_program(env):
    src = os.path.join(env.tmp, "stray.c")
    exe = os.path.join(env.tmp, "stray")
    with open(src, "w") as f:
        f.write(PROGRAM)
    c = subprocess.run([os.path.join(env.bin, "mpicc"), "-o", exe, src], capture_output=True, text=True, timeout=120)
    check(c.returncode == 0, f"mpicc: {c.stderr.strip()[:500]}")
    return exe


@case
def strays_do_not_end_the_job(env):
    exe = build_program(env)
    go = os.path.join(env.tmp, "go")
    auth = {"IMPI_AUTH_KEY": "31415"}
    server = VerboseServer(env, 2, auth)
    clients = []
    try:
        clients.append(env.start(["-client", "0", server.address, "-np", "2", exe, go], auth))
        server.wait_for(r"client 0 \(127\.0\.0\.1:\d+\): joined \(1 of 2\)")
        # While the job waits for client 1: client 0 again, a number out of
        # range, a wrong key.
        stray(env, server, ["-client", "0", server.address, "-np", "1", exe, go], auth,
              r"^impi-server: client from 127\.0\.0\.1:\d+: client rank 0 is already taken by 127\.0\.0\.1:\d+ "
              r"\(give every mpirun -client a different number\): refused, only this connection is closed; the job "
              r"goes on \(1 of 2 clients joined\)$",
              "when this cluster asked to be client 0: impi-server refuses a wrong IMPI_AUTH_KEY, and a client "
              "number that another mpirun already has")
        stray(env, server, ["-client", "5", server.address, "-np", "1", exe, go], auth,
              r"client rank 5 is out of range: impi-server -server 2 takes clients 0\.\.1 \(check mpirun -client\): "
              r"refused, only this connection is closed",
              "-client 5 is out of range: the server expects clients 0..1")
        stray(env, server, ["-client", "1", server.address, "-np", "1", exe, go], {"IMPI_AUTH_KEY": "27182"},
              r"wrong IMPI_AUTH_KEY .*: refused, only this connection is closed; the job goes on \(1 of 2 clients "
              r"joined\)",
              "use the server's key and a free mpirun -client number")
        clients.append(env.start(["-client", "1", server.address, "-np", "2", exe, go], auth))
        server.wait_for(r"start-up exchange complete")
        # While the job runs: client 1 again.
        stray(env, server, ["-client", "1", server.address, "-np", "1", exe, go], auth,
              r"^impi-server: client from 127\.0\.0\.1:\d+: client rank 1 is already taken by 127\.0\.0\.1:\d+ "
              r"\(give every mpirun -client a different number\): refused, only this connection is closed; the job "
              r"goes on$",
              "asked to be client 1")
        with open(go, "w"):
            pass
        results = [finish(p, 90) for p in clients]
        clients = []
        status = server.wait()
        for k, r in enumerate(results):
            check(r.returncode == 0, f"cluster {k} exit {r.returncode}: {r.stderr}")
        check(status == 0, f"impi-server exit {status}: {server.lines}")
        lines = sorted(results[0].stdout.splitlines() + results[1].stdout.splitlines())
        want = sorted(["running"] + [f"rank {r} of 4 sum 10 go 1" for r in range(4)])
        check(lines == want, f"got {lines}")
        refused = [line for line in server.lines if "refused" in line]
        check(len(refused) == 4, f"expected 4 refusals in the server's log: {server.lines}")
        ended = [line for line in server.lines if re.search(r"the job is over(;|$)", line)]
        check(not ended, f"the server ended the job: {ended}")
    finally:
        for p in clients:
            if p.poll() is None:
                p.kill()
                p.communicate()
        server.kill()


if __name__ == "__main__":
    sys.exit(main(CASES))
