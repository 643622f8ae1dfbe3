#!/usr/bin/env python3
"""End-to-end tests of impi-server with scripted IMPI clients over loopback:
the contact line, whole start-up exchanges (NONE and KEY), byte-exact
collation, DONE and FINI, exit status 0.

    python3 test_server_basic.py --build BUILD_DIR [CASE...]

This file also holds the helpers the other test_server_*.py files import
(ServerProcess, Client, run_cases).  Exit status: 0 pass, 1 fail, 77 skip.
Every process started is bounded by a timeout and killed by its pid.
"""
import argparse
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

SKIP = 77
AUTH, IMPI, COLL, DONE, FINI = 0x41555448, 0x494D5049, 0x434F4C4C, 0x444F4E45, 0x46494E49
LABELS = [0x1000, 0x1100, 0x1200, 0x1300, 0x1400, 0x1500, 0x1600,
          0x2000, 0x2100, 0x2200, 0x2300, 0x2400, 0x3000, 0x3100]
C_NPROCS, C_TAGUB = 0x1200, 0x1400
CONTACT = re.compile(r"^(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}):(\d{1,5})$")


class Fail(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Fail(message)


def hexwords(data):
    h = data.hex()
    return " ".join(h[i:i + 8] for i in range(0, len(h), 8))


def clean_env(extra=None):
    """The environment for impi-server: no IMPI/GridMPI settings from the caller, no site or user file."""
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("IMPI_") or k.startswith("GRIDMPI_") or k.startswith("_YAMPI_"))}
    env["GRIDMPI_SITE_FILE"] = ""
    env["GRIDMPI_USER_FILE"] = ""
    env.update(extra or {})
    return env


class ServerProcess:
    """One impi-server run; stdout and stderr go to files so nothing blocks."""

    def __init__(self, build, args, env=None, auth=None):
        self.binary = os.path.join(build, "bin", "impi-server")
        self.dir = tempfile.mkdtemp(prefix="impi-server-test-")
        self.out_path = os.path.join(self.dir, "stdout")
        self.err_path = os.path.join(self.dir, "stderr")
        environment = clean_env(env)
        if auth is None:
            auth = {"IMPI_AUTH_NONE": "1"}
        environment.update(auth)
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen([self.binary] + args, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                         env=environment, cwd=self.dir)
        self.pid = self.proc.pid

    def stdout(self):
        with open(self.out_path) as f:
            return f.read()

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()

    def contact(self, timeout=10.0):
        """Waits for the ADDR:PORT line; returns (addr, port)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.stdout()
            if "\n" in text:
                line = text.split("\n")[0]
                m = CONTACT.match(line)
                check(m, f"first stdout line {line!r} is not ADDR:PORT")
                return m.group(1), int(m.group(2))
            if self.proc.poll() is not None:
                raise Fail(f"impi-server exited with {self.proc.returncode} before printing ADDR:PORT; "
                           f"stderr: {self.stderr().strip()!r}")
            time.sleep(0.02)
        raise Fail(f"impi-server printed no ADDR:PORT within {timeout} s")

    def wait(self, timeout=10.0):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Fail(f"impi-server still running after {timeout} s; stderr: {self.stderr().strip()!r}")

    def running(self):
        return self.proc.poll() is None

    def kill(self):
        """Kills the server if it still runs (by its pid) and removes its directory."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


class Client:
    """A scripted IMPI client (one socket to the server)."""

    def __init__(self, port, host="127.0.0.1", timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.settimeout(timeout)

    def send(self, data, chunk=0):
        if chunk <= 0:
            self.sock.sendall(data)
            return
        for i in range(0, len(data), chunk):
            self.sock.sendall(data[i:i + chunk])
            time.sleep(0.001)

    def recv_exact(self, n):
        data = b""
        while len(data) < n:
            try:
                part = self.sock.recv(n - len(data))
            except socket.timeout:
                raise Fail(f"waited too long for {n} bytes from the server (got {hexwords(data)!r})")
            if not part:
                raise Fail(f"server closed the connection after {len(data)} of {n} expected bytes")
            data += part
        return data

    def expect(self, raw, what):
        got = self.recv_exact(len(raw))
        check(got == raw, f"{what}: got {hexwords(got)}, expected {hexwords(raw)}")

    def expect_closed(self, timeout=10.0):
        """The server closes this connection (EOF or reset) within timeout; no bytes before."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(4096)
        except socket.timeout:
            raise Fail("the server did not close this client's connection")
        except ConnectionResetError:
            return
        check(data == b"", f"expected the connection to be closed, got {hexwords(data)}")

    def expect_open(self, wait=0.2):
        """The server neither closed this connection nor sent anything (within `wait` seconds)."""
        self.sock.settimeout(wait)
        try:
            data = self.sock.recv(1, socket.MSG_PEEK)
        except socket.timeout:
            return
        except ConnectionResetError:
            data = b""
        check(data != b"", "the server closed this client's connection")
        check(False, f"unexpected bytes from the server: {hexwords(data)}")

    def auth(self, mask, key=None, expect_method=None):
        self.send(struct.pack(">III", AUTH, 4, mask))
        method, length = struct.unpack(">ii", self.recv_exact(8))
        check(length == 0, f"AUTH answer length {length}")
        if expect_method is not None:
            check(method == expect_method, f"server chose method {method}, expected {expect_method}")
        if method == 1:
            self.send(struct.pack(">Q", key if key is not None else 0))
        return method

    def impi(self, rank):
        self.send(struct.pack(">IIi", IMPI, 4, rank))
        cmd, length, size = struct.unpack(">IIi", self.recv_exact(12))
        check((cmd, length) == (IMPI, 4), f"IMPI answer {cmd:#x}/{length}")
        return size

    def coll(self, label, data, chunk=0):
        self.send(struct.pack(">IIi", COLL, 4 + len(data), label) + data, chunk)

    def read_coll(self):
        cmd, length = struct.unpack(">II", self.recv_exact(8))
        check(cmd == COLL, f"expected COLL, got {cmd:#x}")
        body = self.recv_exact(length)
        label, mask = struct.unpack(">iI", body[:8])
        return label, mask, body[8:]

    def done(self):
        self.send(struct.pack(">II", DONE, 0))

    def expect_done(self):
        self.expect(struct.pack(">II", DONE, 0), "DONE from the server")

    def fini(self):
        self.send(struct.pack(">II", FINI, 0))

    def close(self):
        self.sock.close()


def join_clients(port, n):
    """n clients with ranks 0..n-1, authenticated with NONE and answered {IMPI, n}."""
    clients = []
    for rank in range(n):
        c = Client(port)
        clients.append(c)
        check(c.auth(0x1, expect_method=0) == 0, "method")
        check(c.impi(rank) == n, "IMPI size")
    return clients


def value(client, label_index, elements=1):
    return b"".join(bytes([client, label_index, e, 0xEE]) for e in range(elements))


def run_cases(cases, description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--build", required=True)
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    if not os.access(os.path.join(build, "bin", "impi-server"), os.X_OK):
        print(f"SKIP: {build}/bin/impi-server is not built")
        return SKIP
    names = args.cases or list(cases)
    failed = 0
    for name in names:
        start = time.monotonic()
        try:
            cases[name](build)
            print(f"PASS {name} ({time.monotonic() - start:.1f} s)")
        except Fail as e:
            failed += 1
            print(f"FAIL {name}: {e}")
        except Exception as e:  # an unexpected error is a failure of that case, not of the run
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}")
    return 1 if failed else 0


# ---- cases --------------------------------------------------------------------------

def case_contact_line(build):
    """Exactly one ADDR:PORT line on stdout; ADDR is this host's IPv4 address; nothing on stderr."""
    s = ServerProcess(build, ["-server", "1"])
    try:
        addr, port = s.contact()
        check(1 <= port <= 65535, f"port {port}")
        check(all(0 <= int(x) <= 255 for x in addr.split(".")), f"address {addr}")
        # The printed address really reaches the server.
        c = Client(port, host=addr)
        c.auth(0x1, expect_method=0)
        check(c.impi(0) == 1, "size")
        c.done()
        c.expect_done()
        c.fini()
        c.expect_closed()
        check(s.wait() == 0, f"exit status {s.proc.returncode}")
        check(s.stdout() == f"{addr}:{port}\n", f"stdout {s.stdout()!r}")
        check(s.stderr() == "", f"stderr {s.stderr()!r}")
    finally:
        s.kill()


def case_two_clients_whole_exchange(build):
    """Two LAM-like clients send all 14 labels (client 1 skips C_TAGUB): byte-exact broadcasts, DONE, FINI, exit 0."""
    s = ServerProcess(build, ["-server", "2"])
    clients = []
    try:
        _, port = s.contact()
        clients.extend(join_clients(port, 2))
        nprocs = {0: 2, 1: 3}
        for rank, c in enumerate(clients):
            for i, label in enumerate(LABELS):
                if rank == 1 and label == C_TAGUB:
                    continue
                data = struct.pack(">i", nprocs[rank]) if label == C_NPROCS else \
                    struct.pack(">i", 0x7fff) if label == C_TAGUB else value(rank, i, rank + 1)
                c.coll(label, data)
            c.done()
        for c in clients:
            for i, label in enumerate(LABELS):
                got = c.read_coll()
                if label == C_NPROCS:
                    raw = struct.pack(">IIiI", COLL, 16, got[0], got[1]) + got[2]
                    check(hexwords(raw) == "434f4c4c 00000010 00001200 00000003 00000002 00000003",
                          f"C_NPROCS broadcast {hexwords(raw)}")
                elif label == C_TAGUB:
                    check(got == (C_TAGUB, 0x1, bytes.fromhex("00007fff")), f"C_TAGUB broadcast {got}")
                else:
                    check(got == (label, 0x3, value(0, i, 1) + value(1, i, 2)), f"label {label:#x}: {got}")
            c.expect_done()
        # The job runs; then FINI one after the other: the server closes each socket.
        clients[1].fini()
        clients[1].expect_closed()
        time.sleep(0.2)
        check(s.running(), "the server exited before the last FINI")
        clients[0].fini()
        clients[0].expect_closed()
        check(s.wait() == 0, f"exit status {s.proc.returncode}; stderr {s.stderr()!r}")
        check(s.stderr() == "", f"stderr {s.stderr()!r}")
    finally:
        for c in clients:
            c.close()
        s.kill()


def case_key_authentication(build):
    """IMPI_AUTH_KEY on both sides: the server picks KEY (raw 00000001 00000000) and accepts the right key."""
    key = 18446744073709551615
    s = ServerProcess(build, ["-server", "1"], auth={"IMPI_AUTH_KEY": str(key), "IMPI_AUTH_NONE": "1"})
    try:
        _, port = s.contact()
        c = Client(port)
        c.send(struct.pack(">III", AUTH, 4, 0x3))
        c.expect(bytes.fromhex("0000000100000000"), "AUTH answer")
        c.send(struct.pack(">Q", key))
        check(c.impi(0) == 1, "IMPI size")
        c.coll(C_NPROCS, struct.pack(">i", 4))
        check(c.read_coll() == (C_NPROCS, 1, struct.pack(">i", 4)), "C_NPROCS")
        c.done()
        c.expect_done()
        c.fini()
        c.expect_closed()
        check(s.wait() == 0, f"exit status {s.proc.returncode}; stderr {s.stderr()!r}")
    finally:
        s.kill()


def case_three_clients_slow_and_split(build):
    """Three clients at different speeds, one sending one byte at a time; labels go out only when all are past them."""
    s = ServerProcess(build, ["-server", "3", "-verbose"])
    clients = {}
    try:
        _, port = s.contact()
        # Client 2 first, everything at once.
        clients[2] = Client(port)
        clients[2].auth(0x1)
        check(clients[2].impi(2) == 3, "size")
        for i, label in enumerate(LABELS):
            clients[2].coll(label, value(2, i))
        clients[2].done()
        # Client 0 joins, sends everything one byte at a time.
        clients[0] = Client(port)
        clients[0].auth(0x1)
        clients[0].impi(0)
        stream = b"".join(struct.pack(">IIi", COLL, 4 + 4, label) + value(0, i) for i, label in enumerate(LABELS))
        clients[0].send(stream + struct.pack(">II", DONE, 0), chunk=1)
        # Nothing may have been broadcast yet: client 1 has not joined.
        clients[2].sock.settimeout(0.3)
        try:
            early = clients[2].sock.recv(1)
        except socket.timeout:
            early = None
        check(early is None, f"the server broadcast before every client joined ({early!r})")
        clients[2].sock.settimeout(10)
        clients[1] = Client(port)
        clients[1].auth(0x1)
        clients[1].impi(1)
        for i, label in enumerate(LABELS[:7]):  # the client labels only, then a pause
            clients[1].coll(label, value(1, i))
        for rank in (0, 1, 2):
            for i, label in enumerate(LABELS[:7]):
                check(clients[rank].read_coll() == (label, 0x7, value(0, i) + value(1, i) + value(2, i)),
                      f"client {rank}: label {label:#x}")
        for i, label in enumerate(LABELS[7:], start=7):
            clients[1].coll(label, value(1, i))
        clients[1].done()
        for rank in (0, 1, 2):
            for i, label in enumerate(LABELS[7:], start=7):
                check(clients[rank].read_coll() == (label, 0x7, value(0, i) + value(1, i) + value(2, i)),
                      f"client {rank}: label {label:#x}")
            clients[rank].expect_done()
        for rank in (2, 0, 1):
            clients[rank].fini()
            clients[rank].expect_closed()
        check(s.wait() == 0, f"exit status {s.proc.returncode}; stderr {s.stderr()!r}")
        err = s.stderr()
        check("client 1 (127.0.0.1:" in err and "joined (3 of 3)" in err, f"verbose log: {err!r}")
        check("all 3 clients sent FINI" in err, f"verbose log: {err!r}")
    finally:
        for c in clients.values():
            c.close()
        s.kill()


GRIDMPI_DATAREP = 0x47440100


def case_lam_client_and_gridmpi_label(build):
    """Client 0 sends the 14 labels and gridmpi's GRIDMPI_DATAREP, client 1 plays LAM/MPI 7.1.4's
    recorded labels (lam_recorded.py): LAM gets the 14 answers and DONE, nothing else (it takes
    anything else for a protocol error), client 0 gets GRIDMPI_DATAREP too, with mask 0x1."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from lam_recorded import LAM_LABELS
    s = ServerProcess(build, ["-server", "2"])
    clients = []
    try:
        _, port = s.contact()
        clients.extend(join_clients(port, 2))
        record = b"GDR1" + bytes([8, 4, 0, 0]) + bytes(range(16))
        for i, label in enumerate(LABELS):
            clients[0].coll(label, struct.pack(">i", 1) if label in (C_NPROCS, 0x2200) else value(0, i, 1))
        clients[0].coll(GRIDMPI_DATAREP, record)
        clients[0].done()
        for label in LABELS:
            clients[1].coll(label, LAM_LABELS[label])
        clients[1].done()
        for rank, c in enumerate(clients):
            for label in LABELS:
                got = c.read_coll()
                check(got[0] == label and got[1] == 0x3, f"client {rank}: {got[0]:#x} mask {got[1]:#x}, "
                                                         f"expected {label:#x} mask 0x3")
            if rank == 0:
                check(c.read_coll() == (GRIDMPI_DATAREP, 0x1, record), "client 0: GRIDMPI_DATAREP")
            c.expect_done()
        clients[1].expect_open()  # nothing more for LAM before FINI
        for c in clients:
            c.fini()
            c.expect_closed()
        check(s.wait() == 0, f"exit status {s.proc.returncode}; stderr {s.stderr()!r}")
    finally:
        for c in clients:
            c.close()
        s.kill()


CASES = {
    "contact_line": case_contact_line,
    "lam_client_and_gridmpi_label": case_lam_client_and_gridmpi_label,
    "two_clients_whole_exchange": case_two_clients_whole_exchange,
    "key_authentication": case_key_authentication,
    "three_clients_slow_and_split": case_three_clients_slow_and_split,
}

if __name__ == "__main__":
    sys.exit(run_cases(CASES, "impi-server end-to-end: complete exchanges"))
