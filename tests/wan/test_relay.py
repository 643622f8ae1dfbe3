#!/usr/bin/env python3
"""A private-address cluster behind impi-relay (docs/multicluster.md).
Root only (exit 77 otherwise).  Three network namespaces:

    A  10.93.1.2  ==gridmpi-wanem==  10.93.2.1  F  192.168.93.1 --veth-- 192.168.93.2  B

A holds impi-server and cluster 0, F (the front end) the relay, B cluster 1;
B has no route to A, F does not forward: every byte between the clusters
goes through the relay.

Cases (all by default, or name some):
  programs      the programs of tests/mpi, each entry once at its largest
                rank count up to 4, split 2 + 2 (tests/impi/multicluster --relay)
  programs_tls  the same with impi.tls on at the server and in both clusters
                (the relay splices TLS records; it has no certificate)
  kill          a running job whose relay is killed: cluster 1's mpirun ends
                within 10 s with a line naming impi-relay, cluster 0's within
                10 s too, nothing left running
  bad_server    a relay given a server address where nothing listens: the
                relay and cluster 1's mpirun each say so in one line, exit
                non-zero; and an address the front end has no route to: the
                relay's one line at start
  no_relay      cluster 1 pointed at impi-server itself (no route from B):
                mpirun's one line, non-zero exit
  no_private    a relay told a private network the front end is not on
                (-net): its one line, exit 1
  rsh_local     IMPI_RELAY_RSH='#': cluster 1's mpirun, on the front end F,
                given the server's address, starts impi-relay itself; its
                ranks' IMPI connections all go to the relay; no relay left
  rsh_remote    IMPI_RELAY_RSH='ip netns exec F' (a remote shell into the
                front end): cluster 1's mpirun on B, given the server's
                address, starts impi-relay on F through it; a shell that
                cannot be run is one line; a relay whose mpirun never comes
                ends by itself (-idle)

    test_relay.py --build BUILD_DIR [-v] [CASE...]
"""
import contextlib
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wancase import REPO, Fail, check, main, say  # noqa: E402
from wanlib import Wan, pids_in  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "tests", "impi"))
from test_netns import CHECK_PROGRAM  # noqa: E402

A, F, F_PRIVATE, B = "10.93.1.2", "10.93.2.1", "192.168.93.1", "192.168.93.2"


@contextlib.contextmanager
def topology(env):
    """A, F, B as at the top; everything in them goes on exit."""
    with Wan(env.wanem, {"A": A, "F": F}, delay_ms=0, extra_ns=("B",)) as wan:
        wan.veth("F", "fb0", F_PRIVATE, "B", "bf0", B)
        yield wan


class Env:
    def __init__(self, build, tmp):
        self.build, self.tmp = build, tmp
        self.bin = os.path.join(build, "bin")
        self.wanem = os.path.join(self.bin, "gridmpi-wanem")
        for exe in ("mpirun", "mpicc", "impi-server", "impi-relay", "gridmpi-wanem"):
            check(os.access(os.path.join(self.bin, exe), os.X_OK), f"{os.path.join(self.bin, exe)} is missing")
        src = os.path.join(tmp, "check.c")
        with open(src, "w") as f:
            f.write(CHECK_PROGRAM)
        self.check_prog = os.path.join(tmp, "check")
        p = subprocess.run([os.path.join(self.bin, "mpicc"), "-O1", "-o", self.check_prog, src],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"mpicc: {p.stderr}")
        self.base = dict(os.environ, IMPI_AUTH_NONE="1")

    def tls_env(self):
        certs = os.path.join(self.tmp, "certs")
        if not os.path.isdir(certs):
            subprocess.run([os.path.join(REPO, "tests", "impi", "make_test_certs.sh"), certs], check=True,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=120)
        return {"GRIDMPI_IMPI_TLS": "1", "GRIDMPI_IMPI_TLS_CERT": os.path.join(certs, "site.pem"),
                "GRIDMPI_IMPI_TLS_KEY": os.path.join(certs, "site.key"),
                "GRIDMPI_IMPI_TLS_CA": os.path.join(certs, "ca.pem")}


def start(wan, site, argv, env, limit=True):
    """argv in a namespace, under `timeout` unless limit is False (then the
    process is the Popen's own pid, for a test that kills it; the
    namespace's removal is its limit)."""
    return subprocess.Popen(wan.exec(site, (["timeout", "120"] if limit else []) + argv), env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def server_in_a(env, wan):
    p = start(wan, "A", [os.path.join(env.bin, "impi-server"), "-server", "2", "-host", A], env.base)
    address = p.stdout.readline().strip()
    check(address, f"impi-server did not print its address: {p.stderr.read() if p.poll() is not None else ''}")
    return p, address


def relay_in_f(env, wan, server_address, limit=True):
    p = start(wan, "F", [os.path.join(env.bin, "impi-relay"), "-relay", "1", server_address, "-net",
                         F_PRIVATE + "/24"], env.base, limit)
    return p, p.stdout.readline().strip()


def nothing_left(wan):
    for site in ("A", "F", "B"):
        deadline = time.monotonic() + 5
        while pids_in(wan[site]) and time.monotonic() < deadline:
            time.sleep(0.1)
        check(not pids_in(wan[site]), f"processes left in {site}")


def error_lines(text):
    return [line for line in text.splitlines() if line.strip()]


def mpirun_lines(text):
    """mpirun's own lines of a stderr (a failure must be exactly one)."""
    return [line for line in error_lines(text) if line.startswith("mpirun: ")]


def run_programs(env, extra_env):
    cmd = [sys.executable, os.path.join(REPO, "tests", "mpi", "run_mpi_tests.py"),
           "--mpicc", os.path.join(env.bin, "mpicc"), "--mpirun", os.path.join(env.bin, "mpirun"),
           "--work-dir", os.path.join(env.build, "tests", "mpi", "relay"), "--clusters", "2", "--relay",
           "--largest-up-to", "4", "-j", "2", "--timeout-scale", "2"]
    for k, v in extra_env.items():
        cmd += ["--env", f"{k}={v}"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3000)
    summary = [line for line in p.stdout.splitlines() if line.startswith("run_mpi_tests:")]
    say(summary[-1] if summary else "no summary")
    failed = [line for line in p.stdout.splitlines() if line.startswith("FAIL")]
    check(p.returncode == 0, f"{len(failed)} run(s) failed through the relay: {failed[:10]}\n{p.stdout[-3000:]}")


def case_programs(env):
    run_programs(env, {})


def case_programs_tls(env):
    run_programs(env, env.tls_env())


def case_kill(env):
    with topology(env) as wan:
        server, address = server_in_a(env, wan)
        relay, raddr = relay_in_f(env, wan, address, limit=False)
        check(raddr, "impi-relay did not print its address")
        ready = tempfile.mkdtemp(dir=env.tmp)
        c0 = start(wan, "A", [os.path.join(env.bin, "mpirun"), "-client", "0", address, "-np", "2", env.check_prog,
                              ready], env.base)
        c1 = start(wan, "B", [os.path.join(env.bin, "mpirun"), "-client", "1", raddr, "-np", "2", env.check_prog,
                              ready], env.base)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len([f for f in os.listdir(ready) if f.startswith("ready.")]) < 4:
            check(c0.poll() is None and c1.poll() is None, "a cluster ended before the relay was killed")
            time.sleep(0.05)
        check(len(os.listdir(ready)) >= 4, "the job did not get going within 60 s")
        relay.kill()
        killed = time.monotonic()
        outs = []
        for k, c in ((1, c1), (0, c0)):
            try:
                out, err = c.communicate(timeout=max(0.1, killed + 10 - time.monotonic()))
            except subprocess.TimeoutExpired:
                c.terminate()
                _, err = c.communicate()
                raise Fail(f"cluster {k}'s mpirun still ran 10 s after the relay was killed; it printed {err!r}")
            outs.append((c.returncode, err))
        took = time.monotonic() - killed
        say(f"both clusters ended {took:.1f} s after the relay died; cluster 1: {outs[0][1].strip()!r}")
        check(outs[0][0] != 0 and outs[1][0] != 0, f"exit statuses {outs[0][0]}, {outs[1][0]} (non-zero expected)")
        lines = mpirun_lines(outs[0][1])
        check(len(lines) == 1 and "impi-relay" in lines[0],
              f"cluster 1's mpirun should end with one line naming impi-relay, printed: {outs[0][1]!r}")
        server.terminate()  # `timeout` passes SIGTERM on to impi-server
        server.wait()
        nothing_left(wan)


def case_bad_server(env):
    with topology(env) as wan:
        # Nothing listens on port 1 of A.
        relay, raddr = relay_in_f(env, wan, A + ":1")
        check(raddr, "impi-relay did not print its address")
        c1 = start(wan, "B", [os.path.join(env.bin, "mpirun"), "-client", "1", raddr, "-np", "2", env.check_prog],
                   env.base)
        _, err1 = c1.communicate(timeout=60)
        _, errr = relay.communicate(timeout=20)
        say(f"mpirun: {err1.strip()!r}; relay: {errr.strip()!r}")
        check(c1.returncode != 0 and relay.returncode == 1, f"exit {c1.returncode} and {relay.returncode}")
        lines = error_lines(errr)
        check(len(lines) == 1 and "cannot reach impi-server at 10.93.1.2:1" in lines[0],
              f"relay: one line naming the server expected: {errr!r}")
        mlines = mpirun_lines(err1)
        check(len(mlines) == 1 and "impi-relay" in mlines[0] and "10.93.1.2:1" in mlines[0],
              f"mpirun: one line naming the relay and the server expected: {err1!r}")
        # An address the front end has no route to: at start.
        relay, _ = relay_in_f(env, wan, "10.77.0.1:5000")
        _, errr = relay.communicate(timeout=20)
        lines = error_lines(errr)
        say(f"no route: {errr.strip()!r}")
        check(relay.returncode == 1 and len(lines) == 1 and "no route to impi-server at 10.77.0.1:5000" in lines[0],
              f"relay with an unroutable server: exit {relay.returncode}, {errr!r}")
        nothing_left(wan)


def case_no_relay(env):
    with topology(env) as wan:
        server, address = server_in_a(env, wan)
        env1 = dict(env.base, IMPI_SERVER_CONNECT_RETRY="2", IMPI_SERVER_CONNECT_SLEEP="0.5")
        c1 = subprocess.Popen(wan.exec("B", ["timeout", "120", os.path.join(env.bin, "mpirun"), "-client", "1",
                                             address, "-np", "2", env.check_prog]),
                              env=env1, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
        _, err = c1.communicate(timeout=60)
        say(f"{err.strip()!r}")
        lines = mpirun_lines(err)
        check(c1.returncode != 0 and len(lines) == 1 and "cannot reach impi-server" in lines[0],
              f"exit {c1.returncode}, {err!r}")
        server.terminate()  # `timeout` passes SIGTERM on to impi-server
        server.wait()
        nothing_left(wan)


def case_no_private(env):
    with topology(env) as wan:
        p = start(wan, "F", [os.path.join(env.bin, "impi-relay"), "-relay", "1", A + ":5000", "-net",
                             "192.168.94.0/24"], env.base)
        out, err = p.communicate(timeout=20)
        say(f"{err.strip()!r}")
        lines = error_lines(err)
        check(p.returncode == 1 and len(lines) == 1 and "192.168.94.0/24" in lines[0] and out == "",
              f"exit {p.returncode}, stdout {out!r}, stderr {err!r}")
        nothing_left(wan)


def job_through_started_relay(env, wan, address, site, rsh):
    """A 2 + 2 job: cluster 0 in A, cluster 1's mpirun in `site` with
    IMPI_RELAY_RSH=rsh, given the server's address.  Both end with 0, every
    IMPI connection of cluster 1 is with the relay, nothing is left."""
    c0 = start(wan, "A", [os.path.join(env.bin, "mpirun"), "-client", "0", address, "-np", "2", env.check_prog],
               env.base)
    c1 = start(wan, site, [os.path.join(env.bin, "mpirun"), "-client", "1", address, "-np", "2", env.check_prog],
               dict(env.base, GRIDMPI_LOG_LEVEL="debug", IMPI_RELAY_RSH=rsh))
    _, err1 = c1.communicate(timeout=100)
    _, err0 = c0.communicate(timeout=30)
    check(c0.returncode == 0 and c1.returncode == 0,
          f"exit {c0.returncode}, {c1.returncode}: {err0[-1500:]} | {err1[-1500:]}")
    peers = [line.split("connection with ")[1].split(":")[0] for line in err1.splitlines()
             if "connection with " in line]
    say(f"cluster 1's IMPI connections: {peers}")
    check(peers and all(p == F_PRIVATE for p in peers),
          f"cluster 1's IMPI connections should all be with the relay at {F_PRIVATE}: {peers}")


def case_rsh_local(env):
    with topology(env) as wan:
        server, address = server_in_a(env, wan)
        job_through_started_relay(env, wan, address, "F", "#")
        server.wait(timeout=20)
        nothing_left(wan)


def case_rsh_remote(env):
    with topology(env) as wan:
        server, address = server_in_a(env, wan)
        # Cluster 1's mpirun on the private network B, given the server's
        # address (no route from B); IMPI_RELAY_RSH a "remote shell" into the
        # front end F: `ip netns exec` runs the relay there as ssh would.
        job_through_started_relay(env, wan, address, "B", f"ip netns exec {wan['F']}")
        server.wait(timeout=20)
        nothing_left(wan)
        # A remote shell that cannot be run: one line, at once.
        c1 = start(wan, "B", [os.path.join(env.bin, "mpirun"), "-client", "1", address, "-np", "1", env.check_prog],
                   dict(env.base, IMPI_RELAY_RSH="/nonexistent/rsh front"))
        _, err = c1.communicate(timeout=30)
        say(f"IMPI_RELAY_RSH=/nonexistent/rsh: {err.strip()!r}")
        check(c1.returncode != 0 and len(error_lines(err)) == 1 and "IMPI_RELAY_RSH" in err
              and "/nonexistent/rsh" in err and "No such file" in err, f"{c1.returncode} {err!r}")
        # A relay whose mpirun never comes (-idle, which mpirun passes through
        # a remote shell): it ends by itself, one line, status 1.
        began = time.monotonic()
        p = start(wan, "F", [os.path.join(env.bin, "impi-relay"), "-relay", "1", address, "-idle", "1"], env.base)
        out, err = p.communicate(timeout=15)
        took = time.monotonic() - began
        say(f"impi-relay -idle 1: {err.strip()!r} after {took:.1f} s")
        check(p.returncode == 1 and len(error_lines(err)) == 1 and "-idle" in err and took < 5,
              f"{p.returncode} after {took:.1f} s: {err!r}")
        server.terminate()
        server.wait(timeout=20)
        nothing_left(wan)


CASES = {"programs": case_programs, "programs_tls": case_programs_tls, "kill": case_kill,
         "bad_server": case_bad_server, "no_relay": case_no_relay, "no_private": case_no_private,
         "rsh_local": case_rsh_local, "rsh_remote": case_rsh_remote}


if __name__ == "__main__":
    sys.exit(main(CASES, Env))
