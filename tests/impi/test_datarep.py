#!/usr/bin/env python3
"""The data representation between clusters (impi/datarep.hpp), end to end:
two clusters of one rank each joined by the real impi-server, running
datarep_prog.c (built with our mpicc).

  * same_representation: both clusters announce theirs (the default): 64-bit
    longs cross unchanged, and the start-up shows the two agreed on native
    bytes (GRIDMPI_LOG_LEVEL=debug line of the transport).
  * external32_peer: cluster 1 sets impi.datarep = external32 (what a
    third-party client looks like: no gridmpi label).  The values beyond 32
    bits fail on the sending side with MPI_ERR_CONVERSION, in both
    directions; the values that fit arrive unchanged; the job ends normally.
  * external32_fatal: the same under MPI_ERRORS_ARE_FATAL: the job ends, and
    mpirun's line gives the reason (value, type, representation).

    test_datarep.py --build BUILD_DIR [CASE...]
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from client_common import Fail, Skip, check, main  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def build_program(env):
    exe = os.path.join(env.tmp, "datarep_prog")
    mpicc = os.path.join(env.bin, "mpicc")
    if not os.path.exists(mpicc):
        raise Skip(f"{mpicc} is not built")
    c = subprocess.run([mpicc, "-O1", "-o", exe, os.path.join(HERE, "datarep_prog.c")], capture_output=True,
                       text=True, timeout=120)
    check(c.returncode == 0, f"mpicc: {c.stderr.strip()[:800]}")
    return exe


def run_job(env, mode, cluster_env, server_status=0):
    """One rank per cluster; returns [(exit, stdout, stderr)] per cluster."""
    exe = build_program(env)
    if not os.path.exists(env.impi_server):
        raise Skip(f"{env.impi_server} is not built")
    auth = {"IMPI_AUTH_NONE": "1"}
    server = subprocess.Popen([env.impi_server, "-server", "2", "-host", "127.0.0.1"], env=env.env(auth),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        address = server.stdout.readline().strip()
        if not re.fullmatch(r"127\.0\.0\.1:\d+", address):
            raise Fail(f"impi-server printed {address!r}")
        procs = [env.start(["-client", str(k), address, "-np", "1", exe, mode], dict(auth, **cluster_env[k]))
                 for k in range(2)]
        results = []
        for proc in procs:
            try:
                out, err = proc.communicate(timeout=90)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate()
            results.append((proc.returncode, out, err))
        try:
            _, server_err = server.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            _, server_err = server.communicate()
            raise Fail("impi-server did not exit after the job")
        if server_status == 0:
            check(server.returncode == 0, f"impi-server exit {server.returncode}: {server_err}")
        return results
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()


def check_ok(results):
    for k, (code, out, err) in enumerate(results):
        check(code == 0 and f"rank {k} ok" in out and "FAIL" not in out,
              f"cluster {k}: exit {code}, output {out!r}, stderr {err[-1500:]!r}")


@case
def same_representation(env):
    debug = {"GRIDMPI_LOG_LEVEL": "debug"}
    results = run_job(env, "pass", [debug, debug])
    check_ok(results)
    for k, (_, _, err) in enumerate(results):
        check(f"user data to client {1 - k} travels as native" in err,
              f"cluster {k} did not choose native bytes: {err[-1500:]!r}")


@case
def external32_peer(env):
    results = run_job(env, "error", [{}, {"GRIDMPI_IMPI_DATAREP": "external32"}])
    check_ok(results)
    for k, (_, out, _) in enumerate(results):
        errors = [l for l in out.splitlines() if l.startswith("rank error: ")]
        check(len(errors) == 2, f"cluster {k}: expected 2 conversion errors, got {errors!r}")


@case
def external32_fatal(env):
    results = run_job(env, "fatal", [{}, {"GRIDMPI_IMPI_DATAREP": "external32"}], server_status=None)
    code, out, err = results[0]
    check(code != 0 and "FAIL" not in out, f"cluster 0: exit {code}, output {out!r}")
    want = ("MPI_LONG value 9223372036854775807 does not fit the 4 bytes external32 gives it", "MPI_ERR_CONVERSION",
            "rank 1 of another cluster")
    check(all(w in err for w in want), f"cluster 0's mpirun does not give the reason {want!r}: {err[-1500:]!r}")


if __name__ == "__main__":
    sys.exit(main(CASES))
