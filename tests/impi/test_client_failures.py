#!/usr/bin/env python3
"""mpirun -client failures, each one mpirun line, a bounded time, the right
exit status, no rank left behind, and the server told (the connection closed
without FINI): server unreachable, wrong key, client number out of range,
no authentication set, the server closing mid-run, the start-up never
completing, inconsistent parameters between clusters, a local failure.

    test_client_failures.py --build BUILD_DIR [CASE...]
"""
import os
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from client_common import check, check_nothing_left, expect_one_line, main  # noqa: E402
from fake_server import FakeServer  # noqa: E402

CASES = {}
NONE = {"IMPI_AUTH_NONE": "1"}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@case
def server_unreachable(env):
    port = free_port()
    p = env.run(["-client", "0", f"127.0.0.1:{port}", "-np", "2", env.prog, "impi"],
                dict(NONE, IMPI_SERVER_CONNECT_RETRY="3", IMPI_SERVER_CONNECT_SLEEP="0.2"))
    expect_one_line(p, f"mpirun: cannot reach impi-server at 127.0.0.1:{port}: Connection refused (start "
                       "impi-server first and pass the ADDR:PORT it printed)")
    check(p.returncode == 255, f"exit {p.returncode}")
    check(0.5 < p.elapsed < 10, f"3 retries 0.2 s apart took {p.elapsed:.1f} s")
    check_nothing_left(env)


@case
def server_starts_late(env):
    # The retries cover a server that comes up a moment after mpirun.
    port = free_port()
    proc = env.start(["-client", "0", f"127.0.0.1:{port}", "-np", "1", env.prog, "impi"],
                     dict(NONE, IMPI_SERVER_CONNECT_RETRY="20", IMPI_SERVER_CONNECT_SLEEP="0.2"))
    try:
        time.sleep(1.0)
        server = FakeServer(nclients=1)
        server.listener.close()
        server.listener = socket.socket()
        server.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.listener.bind(("127.0.0.1", port))
        server.listener.listen(4)
        server.start()
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    check(proc.returncode == 0, f"exit {proc.returncode}: {err}")
    check(server.join(10) and server.outcome == "fini", f"server outcome {server.outcome}")
    check("world 0 of 1" in out, out)


@case
def wrong_key(env):
    server = FakeServer(nclients=2, auth="key", key=111).start()
    p = env.run(["-client", "0", f"127.0.0.1:{server.port}", "-np", "2", env.prog, "impi"], {"IMPI_AUTH_KEY": "222"})
    server.join(10)
    check(server.outcome == "wrong-key", f"server outcome {server.outcome}")
    expect_one_line(p, "mpirun: impi-server closed the connection after authentication, when this cluster asked "
                       "to be client 0: impi-server refuses a wrong IMPI_AUTH_KEY")
    check(p.returncode == 255, f"exit {p.returncode}")
    check(p.elapsed < 10, f"took {p.elapsed:.1f} s")
    check_nothing_left(env)


@case
def client_out_of_range(env):
    server = FakeServer(nclients=2).start()
    p = env.run(["-client", "2", f"127.0.0.1:{server.port}", "-np", "2", env.prog, "impi"], NONE)
    server.join(10)
    check(server.outcome == "rank-out-of-range", f"server outcome {server.outcome}")
    expect_one_line(p, "mpirun: -client 2 is out of range: the server expects clients 0..1")
    check(p.returncode == 255, f"exit {p.returncode}")
    check(p.elapsed < 10, f"took {p.elapsed:.1f} s")
    check_nothing_left(env)


@case
def no_authentication(env):
    server = FakeServer(nclients=1, timeout=3).start()
    p = env.run(["-client", "0", f"127.0.0.1:{server.port}", "-np", "2", env.prog, "impi"])
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    check(p.returncode == 2, f"exit {p.returncode}: {p.stderr}")
    check(len(lines) == 1 and lines[0].startswith("mpirun: no IMPI authentication is enabled: set IMPI_AUTH_NONE=1 "
                                                  "or IMPI_AUTH_KEY=<number>"), f"stderr {p.stderr!r}")
    check(env.job_pids() == [], f"ranks were started: {env.job_pids()}")
    server.join(10)
    check(server.connections == 0, "mpirun contacted the server")
    # A malformed key is refused the same way.
    p = env.run(["-client", "0", "127.0.0.1:9", "-np", "1", env.prog, "impi"], {"IMPI_AUTH_KEY": "12ab"})
    check(p.returncode == 2 and "IMPI_AUTH_KEY is \"12ab\"" in p.stderr, f"exit {p.returncode}: {p.stderr!r}")


@case
def server_closes_mid_run(env):
    server = FakeServer(nclients=2, script="close_after").start()
    proc = env.start(["-client", "0", f"127.0.0.1:{server.port}", "-np", "2", env.prog, "impi-hang"], NONE)
    try:
        # Both ranks have their job map: the job runs.
        lines = [proc.stdout.readline(), proc.stdout.readline()]
        check(all(l.startswith("impi rank ") for l in lines), f"got {lines}")
        start = time.monotonic()
        server.close_event.set()
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    elapsed = time.monotonic() - start
    p = type("P", (), {"stderr": err})
    expect_one_line(p, "mpirun: impi-server closed the connection: another cluster's job failed or the server "
                       "stopped; ending this cluster's job")
    check(proc.returncode == 255, f"exit {proc.returncode}")
    check(elapsed < 10, f"took {elapsed:.1f} s")
    check_nothing_left(env)


@case
def startup_never_completes(env):
    server = FakeServer(nclients=2, script="never_done").start()
    try:
        p = env.run(["-client", "1", f"127.0.0.1:{server.port}", "-np", "2", env.prog, "impi"],
                    dict(NONE, GRIDMPI_IMPI_STARTUP_TIMEOUT="2"))
    finally:
        server.stop()
    expect_one_line(p, "mpirun: impi-server did not complete the start-up within 2 s: are all 2 clusters started "
                       "with mpirun -client 0..1?")
    check(p.returncode == 255, f"exit {p.returncode}")
    check(2 <= p.elapsed < 12, f"the 2 s start-up limit took {p.elapsed:.1f} s")
    check_nothing_left(env)


@case
def clusters_disagree(env):
    server = FakeServer(nclients=2, other_xsize=4096).start()
    p = env.run(["-client", "0", f"127.0.0.1:{server.port}", "-np", "2", env.prog, "impi"], NONE)
    server.join(10)
    expect_one_line(p, "mpirun: the clusters' IMPI start-up data do not fit together: client 0 uses "
                       "IMPI_COLL_XSIZE 1024, client 1 uses 4096: set the same value on every cluster")
    check(p.returncode == 255, f"exit {p.returncode}")
    check(server.outcome == "eof", f"server outcome {server.outcome}")
    check_nothing_left(env)


@case
def local_failure_tells_the_server(env):
    # A rank dies after the start-up: the job fails as usual and the server
    # sees the connection close without FINI.
    server = FakeServer(nclients=2).start()
    proc = env.start(["-client", "0", f"127.0.0.1:{server.port}", "-np", "2", env.prog, "impi-hang"], NONE)
    try:
        lines = [proc.stdout.readline(), proc.stdout.readline()]
        check(all(l.startswith("impi rank ") for l in lines), f"got {lines}")
        victim = env.rank_pids()[1]
        os.kill(victim, signal.SIGKILL)
        check(server.join(10), "the server did not see the connection close")
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    check(server.outcome == "eof", f"server outcome {server.outcome}")
    p = type("P", (), {"stderr": err})
    expect_one_line(p, f"rank 1 (localhost, pid {victim}) killed by signal 9")
    check(proc.returncode == 255, f"exit {proc.returncode}")
    check_nothing_left(env)


@case
def malformed_address(env):
    server = FakeServer(nclients=1).start()
    p = env.run(["-client", "0", f"127.0.0.1:{server.port}", "-np", "2", env.prog, "impi-bad"], NONE)
    server.join(10)
    expect_one_line(p, "mpirun: rank 0 published a malformed IMPI address (IMPI host record of 3 bytes")
    check(p.returncode == 255, f"exit {p.returncode}")
    check(server.outcome == "eof" and not server.sent_done, f"server outcome {server.outcome}")
    check_nothing_left(env)


@case
def interrupted_during_startup(env):
    # Ctrl-C while the clusters wait for each other: the job stops as usual
    # and the server sees the connection close without FINI.
    server = FakeServer(nclients=2, script="never_done").start()
    proc = env.start(["-client", "0", f"127.0.0.1:{server.port}", "-np", "2", env.prog, "impi"], NONE)
    try:
        check(server.startup_done.wait(15), "the labels never reached the server")
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        server.stop()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    p = type("P", (), {"stderr": err})
    expect_one_line(p, "mpirun: received signal 2 (Interrupt); stopping all 2 ranks")
    check(proc.returncode == 130, f"exit {proc.returncode}")
    check(time.monotonic() - start < 10, "took too long")
    check(server.join(10) and server.outcome in ("eof", "closed-by-script"), f"server outcome {server.outcome}")
    check_nothing_left(env)


@case
def bad_client_flags(env):
    for args, needle in ((["-client", "32", "127.0.0.1:4000"], "0..31"),
                         (["-client", "0", "127.0.0.1"], "ADDR:PORT"),
                         (["-client", "0", "127.0.0.1:99999"], "port 1..65535")):
        p = env.run(args + ["-np", "1", env.prog, "impi"], NONE)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        check(p.returncode == 2 and len(lines) == 1 and needle in lines[0] and lines[0].startswith("mpirun: -client"),
              f"{args}: exit {p.returncode}, {lines!r}")
    check(env.job_pids() == [], f"ranks were started: {env.job_pids()}")


if __name__ == "__main__":
    sys.exit(main(CASES))
