#!/usr/bin/env python3
"""gridmpi-wanem, the emulated wide-area link (wan/README.md), on its own.
Root only (exit 77 otherwise).  Two namespaces A (10.93.1.2) and B
(10.93.2.2) joined by the emulator, a third C (10.93.3.2) where a case needs
one; every process runs under a time limit and inside the namespaces, which
go at the end of each case.

Cases (all by default, or name some):
  delay        a TCP echo A -> B: the round trip is at least 2 x the delay
               (40 ms at 20 ms each way) and, at delay 0, well under it;
               8 MiB cross intact both ways (SHA-256)
  per_direction --delay-from A:B=30, B:A=0: the round trip is 30 ms or more
  three_ends   A, B and C on one emulator: each reaches the others, the
               counters show the packets on each direction
  loss         2 % of the packets dropped: TCP still delivers 4 MiB intact,
               the emulator counts the lost packets
  rate         a 4 MB/s cap: 4 MB take at least 0.8 s (never faster than
               the cap allows)
  nic_rate     --nic-rate 4: A sends 2 MB to B and 2 MB to C at once (and
               each answers 2 MB): A's one interface carries both, so the
               pair takes at least 1.6 s (1.0 s if each direction had its
               own 4 MB/s)
  bad_input    a namespace that does not exist, a bad subnet, one end only,
               an unknown flag: one line naming the cause, exit 1, no device left
  cleanup      after the emulator stops: no namespace, no process, no wan0

    test_emulator.py --build BUILD_DIR [-v] [CASE...]
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wancase import Fail, check, main, say  # noqa: E402
from wanlib import Wan, pids_in  # noqa: E402

SITES = {"A": "10.93.1.2", "B": "10.93.2.2"}

# server ADDR PORT: accepts one connection per line of commands; the client
# side does the measuring.  "echo": reflects 1-byte messages; "sink N": reads
# N bytes, answers their SHA-256, then sends N bytes of its own pattern.
PEER = r"""
import hashlib, socket, sys, time
def pattern(n, seed):
    block = bytes((i * 31 + seed) & 255 for i in range(65536))
    return (block * (n // 65536 + 1))[:n]
def recv_exact(c, n):
    buf = bytearray(n); view = memoryview(buf); got = 0
    while got < n:
        k = c.recv_into(view[got:])
        if not k: raise SystemExit("peer: connection closed after %d of %d bytes" % (got, n))
        got += k
    return bytes(buf)
mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "server":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((addr, port)); s.listen(4)
    print("listening", flush=True)
    while True:
        c, _ = s.accept()
        line = b""
        while not line.endswith(b"\n"): line += recv_exact(c, 1)
        cmd = line.split()
        if cmd[0] == b"echo":
            while True:
                b = c.recv(1)
                if not b: break
                c.sendall(b)
        elif cmd[0] == b"sink":
            n = int(cmd[1]); data = recv_exact(c, n)
            c.sendall(hashlib.sha256(data).hexdigest().encode() + b"\n"); c.sendall(pattern(n, 7))
        elif cmd[0] == b"quit":
            break
        c.close()
elif mode == "rtt":
    c = socket.create_connection((addr, port), timeout=20); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c.sendall(b"echo\n"); best = 1e9
    for _ in range(int(sys.argv[4])):
        t = time.monotonic(); c.sendall(b"x"); recv_exact(c, 1); best = min(best, time.monotonic() - t)
    print("rtt_ms %.3f" % (best * 1e3))
elif mode == "transfer":
    n = int(sys.argv[4]); c = socket.create_connection((addr, port), timeout=60)
    data = pattern(n, 3); t = time.monotonic()
    c.sendall(b"sink %d\n" % n); c.sendall(data)
    answer = recv_exact(c, 65); back = recv_exact(c, n); dt = time.monotonic() - t
    ok = answer.decode().strip() == hashlib.sha256(data).hexdigest() and back == pattern(n, 7)
    print("transfer %s %.3f" % ("intact" if ok else "CORRUPT", dt))
"""


class Peer:
    """The PEER program's server in one site, stopped on exit."""

    def __init__(self, wan, site, port=5600):
        self.wan, self.site, self.port = wan, site, port
        self.addr = wan.sites[site]
        self.proc = subprocess.Popen(wan.exec(site, ["timeout", "120", sys.executable, "-c", PEER, "server",
                                                     self.addr, str(port)]),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if line.strip() != "listening":
            self.proc.kill()
            raise Fail(f"peer server in {site} did not start: {line}{self.proc.stderr.read()}")

    def client(self, site, *args, timeout=60):
        p = subprocess.run(self.wan.exec(site, ["timeout", str(timeout), sys.executable, "-c", PEER] + list(args)),
                           capture_output=True, text=True, timeout=timeout + 10)
        check(p.returncode == 0, f"client {args[0]} from {site}: exit {p.returncode}: {p.stderr.strip()}")
        return p.stdout

    def rtt(self, site, count=20):
        out = self.client(site, "rtt", self.addr, str(self.port), str(count))
        return float(out.split()[1])

    def transfer(self, site, nbytes):
        out = self.client(site, "transfer", self.addr, str(self.port), str(nbytes)).split()
        check(out[1] == "intact", f"{nbytes} bytes from {site} to {self.site} arrived corrupted")
        return float(out[2])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def counters(wan):
    """The emulator's counters, read through SIGUSR1."""
    wan.emulator.send_signal(10)
    lines = []
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        line = wan.emulator.stderr.readline()
        lines.append(line)
        if "no end to go to" in line:
            break
    return "".join(lines)


def case_delay(exe):
    with Wan(exe, SITES, delay_ms=20) as wan, Peer(wan, "B") as peer:
        rtt = peer.rtt("A", 10)
        say(f"20 ms each way: rtt {rtt:.1f} ms")
        check(40 <= rtt < 200, f"round trip {rtt:.1f} ms through a 20 ms link (expected 40 ms or more)")
        peer.transfer("A", 8 << 20)
    with Wan(exe, SITES, delay_ms=0) as wan, Peer(wan, "B") as peer:
        rtt = peer.rtt("A", 20)
        say(f"0 ms: rtt {rtt:.2f} ms")
        check(rtt < 20, f"round trip {rtt:.1f} ms through a link with no delay")
        peer.transfer("A", 8 << 20)


def case_per_direction(exe):
    with Wan(exe, SITES, delay_ms=0, delay_from=(("A", "B", 30),)) as wan, Peer(wan, "B") as peer:
        rtt = peer.rtt("A", 10)
        say(f"30 ms A->B, 0 ms B->A: rtt {rtt:.1f} ms")
        check(30 <= rtt < 100, f"round trip {rtt:.1f} ms with 30 ms one way and 0 the other")


def case_three_ends(exe):
    sites = dict(SITES, C="10.93.3.2")
    with Wan(exe, sites, delay_ms=1) as wan, Peer(wan, "B") as pb, Peer(wan, "C") as pc:
        pb.transfer("A", 1 << 20)
        pc.transfer("A", 1 << 20)
        pc.transfer("B", 1 << 20)
        text = counters(wan)
        say(text.strip())
        for a, b in (("A", "B"), ("B", "A"), ("A", "C"), ("C", "A"), ("B", "C"), ("C", "B")):
            check(f"{wan[a]} -> {wan[b]}:" in text, f"no packets counted from {a} to {b}: {text}")


def case_loss(exe):
    with Wan(exe, SITES, delay_ms=1, loss=0.02) as wan, Peer(wan, "B") as peer:
        peer.transfer("A", 4 << 20)
        text = counters(wan)
        say(text.strip())
        lost = [int(line.split(",")[2].split()[0]) for line in text.splitlines() if " -> " in line]
        check(sum(lost) > 0, f"2 % loss but no packet counted as lost: {text}")


def case_rate(exe):
    with Wan(exe, SITES, delay_ms=0, rate_mbs=4) as wan, Peer(wan, "B") as peer:
        # 2 MB each way: 4 MB through a 4 MB/s link in each direction, the
        # two halves one after the other.
        seconds = peer.transfer("A", 2000000)
        say(f"4 MB/s cap: 2 MB each way in {seconds:.2f} s")
        check(seconds >= 0.8, f"2 MB each way took {seconds:.2f} s through a 4 MB/s link (at least 0.8 s expected)")


def case_nic_rate(exe):
    import threading
    sites = dict(SITES, C="10.93.3.2")
    with Wan(exe, sites, delay_ms=0, nic_rate_mbs=4, mtu=9000) as wan, Peer(wan, "B") as pb, \
            Peer(wan, "C") as pc:
        alone = pb.transfer("A", 2000000)
        times, errors = {}, []

        def one(peer, name):
            try:
                times[name] = peer.transfer("A", 2000000)
            except Exception as e:  # reported below
                errors.append(f"{name}: {e}")

        threads = [threading.Thread(target=one, args=(p, n)) for p, n in ((pb, "B"), (pc, "C"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        check(not errors, "; ".join(errors))
        say(f"4 MB/s interfaces: 2 MB each way A-B alone {alone:.2f} s; A-B and A-C at once "
            f"{times['B']:.2f} s and {times['C']:.2f} s")
        check(alone >= 0.8, f"2 MB each way took {alone:.2f} s through 4 MB/s interfaces (at least 0.8 s expected)")
        check(max(times.values()) >= 1.6,
              f"A sent 2 x 2 MB and received 2 x 2 MB through one 4 MB/s interface in {max(times.values()):.2f} s "
              "(at least 1.6 s expected: the interface is not shared)")


def case_bad_input(exe):
    # Only the emulator itself: no namespaces needed for the argument errors.
    cases = [
        (["--end", "gmwan_missing_ns=10.93.1.0/24", "--end", "gmwan_missing_ns2=10.93.2.0/24"],
         "gmwan_missing_ns"),
        (["--end", "x=10.93.1.0/33", "--end", "y=10.93.2.0/24"], "prefix length"),
        (["--end", "x=10.93.1.0/24", "--end", "y=not.an.address"], "not an IPv4 subnet"),
        (["--end", "x=10.93.1.0/24"], "at least two"),
        (["--end", "x=10.93.1.0/24", "--end", "y=10.93.2.0/24", "--speed", "9"], "unknown argument '--speed'"),
        (["--end", "x=10.93.1.0/24", "--end", "y=10.93.2.0/24", "--loss", "1.5"], "probability"),
    ]
    for args, expect in cases:
        p = subprocess.run([exe] + args, capture_output=True, text=True, timeout=10)
        lines = p.stderr.strip().splitlines()
        say(f"{' '.join(args)} -> {p.returncode} {lines}")
        check(p.returncode == 1, f"{args}: exit {p.returncode}, expected 1")
        check(len(lines) == 1 and expect in lines[0] and lines[0].startswith("gridmpi-wanem: "),
              f"{args}: expected one line naming '{expect}', got {p.stderr!r}")
        check(p.stdout == "", f"{args}: printed {p.stdout!r} on stdout")


def case_cleanup(exe):
    wan = Wan(exe, SITES, delay_ms=5)
    with wan, Peer(wan, "B"):
        pid = wan.emulator.pid
        for site in SITES:
            check("wan0" in wan.ip(site, "link", "show"), f"no wan0 in {site}")
        # A process left running in a namespace is killed with it.
        subprocess.Popen(wan.exec("A", ["sleep", "300"]))
        time.sleep(0.2)
        check(pids_in(wan["A"]), "the sleeper is not in A")
    check(not wan.leftovers(), f"namespaces left: {wan.leftovers()}")
    check(not os.path.exists(f"/proc/{pid}"), "the emulator still runs")


CASES = {"delay": case_delay, "per_direction": case_per_direction, "three_ends": case_three_ends,
         "loss": case_loss, "rate": case_rate, "nic_rate": case_nic_rate,
         "bad_input": case_bad_input, "cleanup": case_cleanup}


def setup(build, tmp):
    exe = os.path.join(build, "bin", "gridmpi-wanem")
    check(os.access(exe, os.X_OK), f"{exe} is missing: build the gridmpi-wanem target")
    return exe


if __name__ == "__main__":
    sys.exit(main(CASES, setup))
