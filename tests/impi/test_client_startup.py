#!/usr/bin/env python3
"""mpirun -client against a scripted IMPI server (fake_server.py): the whole
start-up with two local ranks (control_prog impi publishes its IMPI address,
decodes the one value mpirun answers and prints its JobMap), the labels
checked byte for byte on the server side, FINI at the end; key
authentication; a non-MPI program; -dryrun.

    test_client_startup.py --build BUILD_DIR [CASE...]
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from client_common import check, check_nothing_left, main, mpirun_lines  # noqa: E402
from fake_server import LABELS, LABEL_NAMES, FakeServer, int4, ipv4_id  # noqa: E402

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def expected_line(rank, pids, nclients_before=1):
    """What control_prog impi prints for local rank `rank` of client 1 of 2."""
    world = nclients_before + rank
    return (f"impi rank {rank} world {world} of 3 client 1/2 datalen 32768 tagub 2147483647 xsize 1024 "
            f"maxlinear 4 ackmark 10 hiwater 20 first 1 "
            f"hosts 127.0.1.0:9000/1@0,127.0.0.1:20000/1@1,127.0.0.1:20001/1@1, "
            f"pids 4000,{pids[0]},{pids[1]},")


@case
def startup_with_lam(env):
    """Client 0 plays LAM/MPI 7.1.4 with the labels it really sent (lam_recorded.py): one host
    serving two procs, so our two ranks are world ranks 2 and 3 and host 0 has 2 procs."""
    server = FakeServer(nclients=2, auth="none", lam_client=0).start()
    p = env.run(["-client", "1", f"127.0.0.1:{server.port}", "-np", "2", env.prog, "impi"],
                {"IMPI_AUTH_NONE": "1", "IMPI_LAM_CLIENTS": "0"})
    check(server.join(10), "the fake server is still waiting")
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    pids = env.rank_pids()
    lines = sorted(p.stdout.splitlines())
    want = [f"impi rank {r} world {2 + r} of 4 client 1/2 datalen 65536 tagub 2147483647 xsize 1024 "
            f"maxlinear 4 ackmark 10 hiwater 20 first 2 "
            f"hosts 10.92.0.2:36925/2@0,127.0.0.1:20000/1@1,127.0.0.1:20001/1@1, "
            f"pids 7,8,{pids[0]},{pids[1]}," for r in (0, 1)]
    check(lines == want, f"got {lines}, want {want}")
    check(server.outcome == "fini", f"server outcome {server.outcome}")
    check_nothing_left(env, children=False)


@case
def startup_two_ranks(env):
    server = FakeServer(nclients=2, auth="none").start()
    p = env.run(["-client", "1", f"127.0.0.1:{server.port}", "-np", "2", env.prog, "impi"],
                {"IMPI_AUTH_NONE": "1", "IMPI_H_HIWATER": "30", "IMPI_C_DATALEN": "32768",
                 "IMPI_COLL_MAXLINEAR": "4"})
    check(server.join(10), "the fake server is still waiting")
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    check(mpirun_lines(p.stderr) == [], f"unexpected stderr {p.stderr!r}")
    pids = env.rank_pids()
    check(sorted(pids) == [0, 1], f"rank pid files: {env.job_pids()}")
    lines = sorted(p.stdout.splitlines())
    check(lines == [expected_line(0, pids), expected_line(1, pids)], f"got {lines}")
    # The server's view: auth NONE, client 1, the 14 labels in canonical
    # order, byte for byte, then DONE, then FINI and the connection closed.
    check(server.auth_mask == 1, f"auth mask {server.auth_mask}")
    check(server.rank == 1, f"IMPI rank {server.rank}")
    check(server.label_order == LABELS, f"label order {[hex(c) for c in server.label_order]}")
    local = ipv4_id("127.0.0.1")
    expected = {
        0x1000: b"\0" * 8, 0x1100: int4(2), 0x1200: int4(2), 0x1300: int4(32768), 0x1400: int4(0x7FFFFFFF),
        0x1500: int4(-1), 0x1600: int4(4), 0x2000: local * 2, 0x2100: int4(20000, 20001), 0x2200: int4(1, 1),
        0x2300: int4(10, 10), 0x2400: int4(30, 30), 0x3000: local * 2,
        0x3100: struct.pack(">qq", pids[0], pids[1]),
    }
    for code in LABELS:
        check(server.labels.get(code) == expected[code],
              f"IMPI_{LABEL_NAMES[code]}: sent {server.labels.get(code)!r}, expected {expected[code]!r}")
    check(server.sent_done, "no DONE from mpirun")
    check(server.outcome == "fini", f"server outcome {server.outcome}")
    check(server.after_fini == b"", f"bytes after FINI: {server.after_fini!r}")
    check_nothing_left(env, children=False)


@case
def key_authentication(env):
    key = 18446744073709551615  # the largest key
    for extra, mask in (({"IMPI_AUTH_KEY": str(key)}, 2), ({"IMPI_AUTH_KEY": str(key), "IMPI_AUTH_NONE": ""}, 3)):
        env.clear_pids()
        server = FakeServer(nclients=1, auth="key", key=key).start()
        p = env.run(["-client", "0", f"127.0.0.1:{server.port}", "-np", "2", env.prog, "impi"], extra)
        check(server.join(10), "the fake server is still waiting")
        check(p.returncode == 0, f"{extra}: exit {p.returncode}: {p.stderr}")
        check(server.auth_mask == mask, f"{extra}: auth mask {server.auth_mask}, expected {mask}")
        check(server.key_received == key, f"key {server.key_received}")
        check(server.outcome == "fini", f"server outcome {server.outcome}")
        lines = sorted(p.stdout.splitlines())
        check(len(lines) == 2 and all(f"impi rank {r} world {r} of 2 client 0/1 " in lines[r] for r in range(2)),
              f"got {lines}")
        check_nothing_left(env, children=False)


@case
def non_mpi_program(env):
    # No rank publishes an IMPI address: the program runs, mpirun says once
    # that no start-up took place, and closes without FINI.
    server = FakeServer(nclients=2).start()
    p = env.run(["-client", "0", f"127.0.0.1:{server.port}", "-np", "2", "sh", "-c",
                 'echo "$IMPI_CLIENT_ID $IMPI_SERVER"; exit 3'], {"IMPI_AUTH_NONE": "1"})
    check(server.join(10), "the fake server is still waiting")
    check(p.returncode == 3, f"expected the program's status 3, got {p.returncode}: {p.stderr}")
    check(p.stdout.splitlines() == [f"0 127.0.0.1:{server.port}"] * 2, f"output {p.stdout!r}")
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    check(len(lines) == 1 and "did not start an MPI job" in lines[0] and "without FINI" in lines[0],
          f"stderr {p.stderr!r}")
    check(server.outcome == "eof" and not server.sent_done, f"server outcome {server.outcome}")


@case
def dryrun(env):
    p = env.run(["-client", "2", "192.0.2.1:4000", "-np", "1", "-dryrun", "./a.out"], {"IMPI_AUTH_NONE": "1"})
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    check("IMPI_CLIENT_ID=2" in p.stdout and "IMPI_SERVER=192.0.2.1:4000" in p.stdout, p.stdout)


if __name__ == "__main__":
    sys.exit(main(CASES))
