#!/usr/bin/env python3
"""End-to-end tests of how impi-server ends a failed job and refuses a
connection that is not a client yet.  A client (after IMPI) that disconnects
before FINI (during the exchange and while the job runs), that sends garbage,
or SIGTERM: one line on stderr naming the client and the cause, every other
client's connection closed by the server (so its mpirun learns the job is
over), exit status 1, within seconds.  A connection with a wrong key, no
common authentication method, garbage before IMPI or a client rank already
taken: refused alone with one line, the job goes on and completes.  A port
probe (connect, close, no bytes) does not end the job.

    python3 test_server_failures.py --build BUILD_DIR [CASE...]

Exit status: 0 pass, 1 fail, 77 skip.
"""
import os
import re
import signal
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_server_basic import (C_NPROCS, Client, ServerProcess, check, run_cases)  # noqa: E402


def joined(port, rank, mask=0x1, key=None):
    c = Client(port)
    c.auth(mask, key)
    c.impi(rank)
    return c


def check_one_line(s, pattern):
    lines = s.stderr().splitlines()
    check(len(lines) == 1, f"expected one line on stderr, got {lines!r}")
    check(re.fullmatch(pattern, lines[0]), f"stderr line {lines[0]!r} does not match {pattern!r}")


def complete(s, clients):
    """The joined `clients` finish the job: DONE, FINI, the server exits 0."""
    for c in clients:
        c.done()
    for c in clients:
        c.expect_done()
    for c in clients:
        c.fini()
        c.expect_closed()
    check(s.wait() == 0, f"exit status {s.proc.returncode}; stderr {s.stderr()!r}")


def refused_alone(s, stray, others, pattern):
    """`stray` is closed, the clients in `others` are not, the server goes on with one line."""
    stray.expect_closed()
    time.sleep(0.2)
    check(s.running(), f"a refused connection ended the server: {s.stderr()!r}")
    for c in others:
        c.expect_open()
    check_one_line(s, pattern)


def case_wrong_key(build):
    """A connection with a wrong key is refused alone; the job goes on and completes."""
    s = ServerProcess(build, ["-server", "2"], auth={"IMPI_AUTH_KEY": "4242"})
    good = bad = good1 = None
    try:
        _, port = s.contact()
        good = joined(port, 0, mask=0x2, key=4242)
        bad = Client(port)
        check(bad.auth(0x3, key=4243) == 1, "server should choose KEY")
        refused_alone(s, bad, [good],
                      r"impi-server: client from 127\.0\.0\.1:\d+: wrong IMPI_AUTH_KEY \(set the same key on the server "
                      r"and every cluster\): refused, only this connection is closed; the job goes on \(1 of 2 "
                      r"clients joined\)")
        good1 = joined(port, 1, mask=0x2, key=4242)
        complete(s, [good, good1])
    finally:
        for c in (good, bad, good1):
            if c:
                c.close()
        s.kill()


def case_no_common_method(build):
    s = ServerProcess(build, ["-server", "1"], auth={"IMPI_AUTH_KEY": "1"})
    c = good = None
    try:
        _, port = s.contact()
        c = Client(port)
        c.send(struct.pack(">III", 0x41555448, 4, 0x1))
        refused_alone(s, c, [],
                      r"impi-server: client from 127\.0\.0\.1:\d+: no common authentication method \(client "
                      r"offers 0x1 = NONE, server enables 0x2 = KEY\); .*: refused, only this connection is closed; "
                      r"the job goes on \(0 of 1 clients joined\)")
        good = joined(port, 0, mask=0x2, key=1)
        complete(s, [good])
    finally:
        for x in (c, good):
            if x:
                x.close()
        s.kill()


def case_disconnect_during_exchange(build):
    """Client 1 vanishes after one label: client 0's socket is closed by the server, exit 1."""
    s = ServerProcess(build, ["-server", "2"])
    c0 = c1 = None
    try:
        _, port = s.contact()
        c0 = joined(port, 0)
        c1 = joined(port, 1)
        c0.coll(C_NPROCS, struct.pack(">i", 1))
        c1.coll(C_NPROCS, struct.pack(">i", 1))
        check(c0.read_coll() == (C_NPROCS, 3, struct.pack(">ii", 1, 1)), "C_NPROCS")
        port1 = c1.sock.getsockname()[1]
        c1.close()
        c1 = None
        start = time.monotonic()
        c0.expect_closed()
        check(s.wait() == 1, f"exit status {s.proc.returncode}")
        check(time.monotonic() - start < 5, "took too long")
        check_one_line(s, rf"impi-server: client 1 \(127\.0\.0\.1:{port1}\) disconnected before FINI: the job is "
                          r"over; closing the other clients")
    finally:
        for c in (c0, c1):
            if c:
                c.close()
        s.kill()


def case_disconnect_while_job_runs(build):
    """After DONE: client 0 closes without FINI; client 1 (idle, waiting for its job) is closed, exit 1."""
    s = ServerProcess(build, ["-server", "2"])
    c0 = c1 = None
    try:
        _, port = s.contact()
        c0 = joined(port, 0)
        c1 = joined(port, 1)
        for c in (c0, c1):
            c.done()
        for c in (c0, c1):
            c.expect_done()
        c0.close()
        c0 = None
        c1.expect_closed()
        check(s.wait() == 1, f"exit status {s.proc.returncode}")
        check_one_line(s, r"impi-server: client 0 \(127\.0\.0\.1:\d+\) disconnected before FINI: the job is over; "
                          r"closing the other clients")
    finally:
        for c in (c0, c1):
            if c:
                c.close()
        s.kill()


def case_garbage(build):
    """Bytes that are not IMPI from a connection that is not a client are refused alone."""
    s = ServerProcess(build, ["-server", "2"])
    c0 = web = c1 = None
    try:
        _, port = s.contact()
        c0 = joined(port, 0)
        web = Client(port)
        web.send(b"GET / HTTP/1.0\r\n\r\n")
        refused_alone(s, web, [c0],
                      r"impi-server: client from 127\.0\.0\.1:\d+ sent 0x47455420 where a command was expected "
                      r"\(not an IMPI client, or out of step with the protocol\): refused, only this connection is "
                      r"closed; the job goes on \(1 of 2 clients joined\)")
        c1 = joined(port, 1)
        complete(s, [c0, c1])
    finally:
        for c in (c0, web, c1):
            if c:
                c.close()
        s.kill()


def case_garbage_from_a_client_ends_the_job(build):
    """Once a connection is client K, a protocol error of it ends the job."""
    s = ServerProcess(build, ["-server", "2"])
    c0 = c1 = None
    try:
        _, port = s.contact()
        c0 = joined(port, 0)
        c1 = joined(port, 1)
        c1.send(b"GET / HTTP/1.0\r\n\r\n")
        c1.expect_closed()
        c0.expect_closed()
        check(s.wait() == 1, f"exit status {s.proc.returncode}")
        check_one_line(s, r"impi-server: client 1 \(127\.0\.0\.1:\d+\) sent 0x47455420 where a command was "
                          r"expected \(not an IMPI client, or out of step with the protocol\): the job is over; "
                          r"closing the other clients")
    finally:
        for c in (c0, c1):
            if c:
                c.close()
        s.kill()


def case_duplicate_rank(build):
    """A second client 1 is refused alone (as the IU server does); the job completes."""
    s = ServerProcess(build, ["-server", "3"])
    c0 = dup = c1 = c2 = None
    try:
        _, port = s.contact()
        c0 = joined(port, 1)
        dup = Client(port)
        dup.auth(0x1)
        dup.send(struct.pack(">IIi", 0x494D5049, 4, 1))
        refused_alone(s, dup, [c0],
                      r"impi-server: client from 127\.0\.0\.1:\d+: client rank 1 is already taken by "
                      r"127\.0\.0\.1:\d+ \(give every mpirun -client a different number\): refused, only this "
                      r"connection is closed; the job goes on \(1 of 3 clients joined\)")
        c1 = joined(port, 0)
        c2 = joined(port, 2)
        complete(s, [c0, c1, c2])
    finally:
        for c in (c0, dup, c1, c2):
            if c:
                c.close()
        s.kill()


def case_rank_out_of_range(build):
    """A client rank beyond -server M gets the size (so that it can tell), then only its connection is closed."""
    s = ServerProcess(build, ["-server", "2"])
    c0 = stray = c1 = None
    try:
        _, port = s.contact()
        c0 = joined(port, 0)
        stray = Client(port)
        stray.auth(0x1)
        check(stray.impi(2) == 2, "the size should be answered")
        refused_alone(s, stray, [c0],
                      r"impi-server: client from 127\.0\.0\.1:\d+: client rank 2 is out of range: impi-server "
                      r"-server 2 takes clients 0\.\.1 \(check mpirun -client\): refused, only this connection is "
                      r"closed; the job goes on \(1 of 2 clients joined\)")
        c1 = joined(port, 1)
        complete(s, [c0, c1])
    finally:
        for c in (c0, stray, c1):
            if c:
                c.close()
        s.kill()


def case_sigterm(build):
    for signo, name in ((signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")):
        s = ServerProcess(build, ["-server", "2"])
        c0 = None
        try:
            _, port = s.contact()
            c0 = joined(port, 0)
            s.proc.send_signal(signo)
            c0.expect_closed()
            check(s.wait() == 1, f"{name}: exit status {s.proc.returncode}")
            check_one_line(s, rf"impi-server: interrupted by {name}: closing 1 client connection")
        finally:
            if c0:
                c0.close()
            s.kill()


def case_probe_is_ignored(build):
    """A connection that sends nothing (nc -z) is not a client: the job goes on and ends with status 0."""
    s = ServerProcess(build, ["-server", "1"])
    try:
        _, port = s.contact()
        Client(port).close()
        time.sleep(0.2)
        check(s.running(), f"a probe ended the server: {s.stderr()!r}")
        c = joined(port, 0)
        c.done()
        c.expect_done()
        c.fini()
        c.expect_closed()
        c.close()
        check(s.wait() == 0, f"exit status {s.proc.returncode}; stderr {s.stderr()!r}")
        check(s.stderr() == "", f"stderr {s.stderr()!r}")
    finally:
        s.kill()


CASES = {
    "wrong_key": case_wrong_key,
    "no_common_method": case_no_common_method,
    "disconnect_during_exchange": case_disconnect_during_exchange,
    "disconnect_while_job_runs": case_disconnect_while_job_runs,
    "garbage": case_garbage,
    "garbage_from_a_client_ends_the_job": case_garbage_from_a_client_ends_the_job,
    "duplicate_rank": case_duplicate_rank,
    "rank_out_of_range": case_rank_out_of_range,
    "sigterm": case_sigterm,
    "probe_is_ignored": case_probe_is_ignored,
}

if __name__ == "__main__":
    sys.exit(run_cases(CASES, "impi-server end-to-end: failures end the job cleanly"))
