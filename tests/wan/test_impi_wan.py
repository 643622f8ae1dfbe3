#!/usr/bin/env python3
"""A two-cluster job across the emulated wide-area link (gridmpi-wanem,
wan/README.md).  Root only (exit 77 otherwise).  Cluster 0 and impi-server
in namespace A (10.93.1.2), cluster 1 in B (10.93.2.2), 2 ranks each; every
IMPI connection crosses the emulator, so TCP and the IMPI transport see the
true round trip.

Cases (all by default, or name some):
  programs   at 5 ms each way: the check program of tests/impi/test_netns.py
             (a shift exchange of 200000 ints past every eager limit, each
             value checked, and an allreduce) and tests/mpi/impi_coll.c
  window     the IMPI window of each host connection (GRIDMPI_LOG_LEVEL=debug
             line): sized to the round trip - 21 packets (2 x ACKMARK + 1;
             up to 26 on a busy host) at 0 ms, at least 40 at 10 ms each way (a 20 ms round trip
             holds 24 packets of 1 MiB at impi.link_bandwidth 10 Gb/s, plus
             2 x ACKMARK) - and exactly IMPI_H_HIWATER when that is set

After every case nothing runs in the namespaces and they are gone.

    test_impi_wan.py --build BUILD_DIR [-v] [CASE...]
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wancase import REPO, Fail, check, main, say  # noqa: E402
from wanlib import Wan, pids_in  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "tests", "impi"))
from test_netns import CHECK_PROGRAM  # noqa: E402

SITES = {"A": "10.93.1.2", "B": "10.93.2.2"}


class Env:
    def __init__(self, build, tmp):
        self.bin = os.path.join(build, "bin")
        self.wanem = os.path.join(self.bin, "gridmpi-wanem")
        self.tmp = tmp
        for exe in ("mpirun", "mpicc", "impi-server", "gridmpi-wanem"):
            if not os.access(os.path.join(self.bin, exe), os.X_OK):
                raise Fail(f"{os.path.join(self.bin, exe)} is missing: build it")
        self.check_prog = self.compile("netns_check.c", CHECK_PROGRAM)
        with open(os.path.join(REPO, "tests", "mpi", "impi_coll.c")) as f:
            self.coll_prog = self.compile("impi_coll.c", f.read())

    def compile(self, name, text):
        src = os.path.join(self.tmp, name)
        with open(src, "w") as f:
            f.write(text)
        exe = src[:-2]
        p = subprocess.run([os.path.join(self.bin, "mpicc"), "-O1", "-I", os.path.join(REPO, "tests", "mpi"),
                            "-o", exe, src], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"mpicc {name}: {p.stderr}")
        return exe

    def job(self, wan, prog, env_extra=None, args=(), limit=120):
        """impi-server and client 0 in A, client 1 in B, 2 ranks each; returns (status, outputs)."""
        env = dict(os.environ, IMPI_AUTH_NONE="1", **(env_extra or {}))
        out = os.path.join(self.tmp, "server.addr")
        if os.path.exists(out):
            os.unlink(out)
        server = subprocess.Popen(wan.exec("A", ["timeout", str(limit), os.path.join(self.bin, "impi-server"),
                                                 "-server", "2", "-host", SITES["A"], "-out", out]),
                                  env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 20
        address = None
        while time.monotonic() < deadline and not address and server.poll() is None:
            if os.path.exists(out):
                address = open(out).read().strip() or None
            time.sleep(0.05)
        if not address:
            server.kill()
            raise Fail(f"impi-server did not print its address: {server.communicate()[0]}")
        clients = [subprocess.Popen(wan.exec(site, ["timeout", str(limit), os.path.join(self.bin, "mpirun"),
                                                    "-client", str(k), address, "-np", "2", prog] + list(args)),
                                    env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
                   for k, site in enumerate("AB")]
        outs = []
        for c in clients:
            o, e = c.communicate(timeout=limit + 10)
            outs.append((c.returncode, o, e))
        server.communicate(timeout=20)
        for site in SITES:
            deadline = time.monotonic() + 5
            while pids_in(wan[site]) and time.monotonic() < deadline:
                time.sleep(0.1)
            check(not pids_in(wan[site]), f"processes left in {site} after the job")
        return outs


def expect_ok(outs, what):
    for k, (rc, o, e) in enumerate(outs):
        check(rc == 0, f"{what}: client {k} exit {rc}: {e.strip()[-2000:]}")


def case_programs(env):
    with Wan(env.wanem, SITES, delay_ms=5) as wan:
        outs = env.job(wan, env.check_prog)
        expect_ok(outs, "check program")
        lines = sorted(line for _, o, _ in outs for line in o.splitlines() if line.startswith("rank "))
        check(lines == [f"rank {r} of 4 ok" for r in range(4)], f"check program printed {lines}")
        outs = env.job(wan, env.coll_prog)
        expect_ok(outs, "impi_coll")
        say("check program and impi_coll passed at 5 ms")


WINDOW = re.compile(r"connection with (\S+): round trip ([\d.]+) ms, window (\d+) packets")


def windows(outs):
    found = [(m.group(1), float(m.group(2)), int(m.group(3)))
             for _, _, e in outs for m in WINDOW.finditer(e)]
    check(found, "no window line in the debug output: " + " | ".join(e[-500:] for _, _, e in outs))
    return found


def case_window(env):
    debug = {"GRIDMPI_LOG_LEVEL": "debug"}
    with Wan(env.wanem, SITES, delay_ms=0) as wan:
        outs = env.job(wan, env.check_prog, debug)
        expect_ok(outs, "0 ms")
        w = windows(outs)
        say(f"0 ms: {w}")
        # 2 x ACKMARK + 1 on an idle link; the handshake's round trip through
        # a busy 2-core host can add a millisecond or two (a packet or two).
        check(all(21 <= x[2] <= 26 for x in w), f"windows at 0 ms: {w} (expected 21 = 2 x ACKMARK + 1, a few more "
                                                 "on a busy host)")
    with Wan(env.wanem, SITES, delay_ms=10) as wan:
        outs = env.job(wan, env.check_prog, debug)
        expect_ok(outs, "10 ms")
        w = windows(outs)
        say(f"10 ms: {w}")
        check(all(x[1] >= 19 and 40 <= x[2] <= 64 for x in w),
              f"windows at 10 ms each way: {w} (expected a round trip of 20 ms or more and 40..64 packets)")
        outs = env.job(wan, env.check_prog, dict(debug, IMPI_H_HIWATER="30"))
        expect_ok(outs, "10 ms, IMPI_H_HIWATER=30")
        w = windows(outs)
        say(f"10 ms, IMPI_H_HIWATER=30: {w}")
        check(all(x[2] == 30 for x in w), f"IMPI_H_HIWATER=30 set, windows {w}")


CASES = {"programs": case_programs, "window": case_window}


if __name__ == "__main__":
    sys.exit(main(CASES, Env))
