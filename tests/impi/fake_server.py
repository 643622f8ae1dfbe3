"""A scripted IMPI server for the mpirun -client tests (docs/impi-protocol.md
section 3), written independently of impi-server so that the tests check
mpirun against the protocol, not against our own server.

It serves ONE real client (the mpirun under test) and plays every other
client itself: client c (c != the real one) has one host 127.0.1.<c>,
port 9000+c, one proc with pid 4000+c, default parameters.  Everything the
real client sends is recorded for byte-level checks.

    server = FakeServer(nclients=2, auth="none")   # or auth="key", key=5
    server.start()                                  # server.port
    ... run mpirun -client K 127.0.0.1:<port> ...
    server.join(10); server.outcome -> "fini", "eof", "closed-by-script", ...

Scripts (behaviour after the real client's DONE):
    normal       broadcast every label, DONE, then wait for FINI or EOF
    close_after  as normal, then close the connection once `close_event` is set
    never_done   broadcast nothing (the start-up never completes)
Other knobs: lam_client (that played client sends the labels LAM/MPI 7.1.4
really sent, lam_recorded.py: one host 10.92.0.2 serving 2 procs, pids 7 and
8), other_xsize (COLL_XSIZE the played clients send), wrong_key
handling (close after a wrong key, as the IU server does), a client rank
>= nclients is disconnected after IMPI (as the IU server does).
"""
import socket
import struct
import threading

from lam_recorded import LAM_LABELS

AUTH, IMPI, COLL, DONE, FINI = 0x41555448, 0x494D5049, 0x434F4C4C, 0x444F4E45, 0x46494E49

LABELS = [0x1000, 0x1100, 0x1200, 0x1300, 0x1400, 0x1500, 0x1600,
          0x2000, 0x2100, 0x2200, 0x2300, 0x2400, 0x3000, 0x3100]
LABEL_NAMES = {
    0x1000: "C_VERSION", 0x1100: "C_NHOSTS", 0x1200: "C_NPROCS", 0x1300: "C_DATALEN", 0x1400: "C_TAGUB",
    0x1500: "C_COLL_XSIZE", 0x1600: "C_COLL_MAXLINEAR", 0x2000: "H_IPV6", 0x2100: "H_PORT", 0x2200: "H_NPROCS",
    0x2300: "H_ACKMARK", 0x2400: "H_HIWATER", 0x3000: "P_IPV6", 0x3100: "P_PID",
}


def ipv4_id(dotted):
    return b"\0" * 12 + socket.inet_aton(dotted)


def int4(*values):
    return b"".join(struct.pack(">i", v) for v in values)


def played_client(c, xsize=-1):
    """The labels of a client this server plays: one host, one proc."""
    ident = ipv4_id(f"127.0.1.{c}")
    return {
        0x1000: b"\0" * 8, 0x1100: int4(1), 0x1200: int4(1), 0x1300: int4(65536), 0x1400: int4(0x7FFFFFFF),
        0x1500: int4(xsize), 0x1600: int4(-1), 0x2000: ident, 0x2100: int4(9000 + c), 0x2200: int4(1),
        0x2300: int4(10), 0x2400: int4(20), 0x3000: ident, 0x3100: struct.pack(">q", 4000 + c),
    }


class Closed(Exception):
    pass


class FakeServer:
    def __init__(self, nclients=2, auth="none", key=None, script="normal", other_xsize=-1, timeout=60,
                 lam_client=None):
        self.nclients = nclients
        self.lam_client = lam_client
        self.auth = auth
        self.key = key
        self.script = script
        self.other_xsize = other_xsize
        self.timeout = timeout
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.port = self.listener.getsockname()[1]
        self.close_event = threading.Event()
        self.startup_done = threading.Event()
        # What happened, for the checks.
        self.connections = 0
        self.auth_mask = None
        self.key_received = None
        self.rank = None
        self.labels = {}         # code -> bytes sent by the real client
        self.label_order = []    # codes in the order received
        self.sent_done = False   # the real client sent DONE
        self.outcome = None      # "fini", "eof", "closed-by-script", "wrong-key", "rank-out-of-range", "error: ..."
        self.after_fini = b""    # anything received after FINI
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def join(self, timeout=30):
        self.thread.join(timeout)
        return not self.thread.is_alive()

    def stop(self):
        self.close_event.set()
        try:
            self.listener.close()
        except OSError:
            pass

    # --- protocol ----------------------------------------------------------------

    def _recv_exact(self, sock, n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise Closed(f"end of stream after {len(data)} of {n} bytes")
            data += chunk
        return data

    def _command(self, sock):
        cmd, length = struct.unpack(">II", self._recv_exact(sock, 8))
        return cmd, self._recv_exact(sock, length) if length else b""

    def _run(self):
        self.listener.settimeout(self.timeout)
        try:
            sock, _ = self.listener.accept()
        except OSError:
            self.outcome = "no connection"
            return
        self.connections += 1
        sock.settimeout(self.timeout)
        try:
            self._serve(sock)
        except (Closed, ConnectionResetError):
            # A reset is the client closing with our last bytes unread: a close.
            if self.outcome is None:
                self.outcome = "eof"
        except (OSError, struct.error) as e:
            if self.outcome is None:
                self.outcome = f"error: {e}"
        finally:
            self.startup_done.set()
            sock.close()
            try:
                self.listener.close()
            except OSError:
                pass

    def _serve(self, sock):
        cmd, payload = self._command(sock)
        if cmd != AUTH or len(payload) != 4:
            self.outcome = f"error: expected AUTH, got {cmd:#x}"
            return
        self.auth_mask = struct.unpack(">I", payload)[0]
        if self.auth == "key" and self.auth_mask & 2:
            sock.sendall(struct.pack(">ii", 1, 0))
            self.key_received = struct.unpack(">Q", self._recv_exact(sock, 8))[0]
            if self.key_received != self.key:
                self.outcome = "wrong-key"
                return
        elif self.auth_mask & 1:
            sock.sendall(struct.pack(">ii", 0, 0))
        else:
            self.outcome = "no-common-method"
            return
        cmd, payload = self._command(sock)
        if cmd != IMPI or len(payload) != 4:
            self.outcome = f"error: expected IMPI, got {cmd:#x}"
            return
        self.rank = struct.unpack(">i", payload)[0]
        sock.sendall(struct.pack(">IIi", IMPI, 4, self.nclients))
        if not 0 <= self.rank < self.nclients:
            self.outcome = "rank-out-of-range"
            return
        while True:
            cmd, payload = self._command(sock)
            if cmd == DONE:
                self.sent_done = True
                break
            if cmd != COLL:
                self.outcome = f"error: expected COLL or DONE, got {cmd:#x}"
                return
            code = struct.unpack(">i", payload[:4])[0]
            self.labels[code] = payload[4:]
            self.label_order.append(code)
        if self.script == "never_done":
            self.startup_done.set()
            self.close_event.wait(self.timeout)
            self.outcome = "closed-by-script"
            return
        others = {c: LAM_LABELS if c == self.lam_client else played_client(c, self.other_xsize)
                  for c in range(self.nclients) if c != self.rank}
        out = b""
        for code in LABELS:
            mask, data = 0, b""
            for c in range(self.nclients):
                part = self.labels.get(code) if c == self.rank else others[c].get(code)
                if part is not None:
                    mask |= 1 << c
                    data += part
            out += struct.pack(">IIiI", COLL, 8 + len(data), code, mask) + data
        out += struct.pack(">II", DONE, 0)
        sock.sendall(out)
        self.startup_done.set()
        if self.script == "close_after":
            self.close_event.wait(self.timeout)
            self.outcome = "closed-by-script"
            return
        cmd, payload = self._command(sock)
        if cmd != FINI or payload:
            self.outcome = f"error: expected FINI, got {cmd:#x}"
            return
        self.outcome = "fini"
        sock.settimeout(5)
        try:
            while True:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                self.after_fini += chunk
        except OSError:
            pass
