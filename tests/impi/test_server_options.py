#!/usr/bin/env python3
"""End-to-end tests of impi-server's command line and environment: -port,
IMPI_SERVER_PORT_RANGE, -out, -nl, -pid, -host, -bg, -help, missing or bad
authentication settings and bad flags (one line, exit status 2).

    python3 test_server_options.py --build BUILD_DIR [CASE...]

Exit status: 0 pass, 1 fail, 77 skip.
"""
import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_server_basic import (Client, Fail, ServerProcess, check, clean_env, run_cases)  # noqa: E402


def one_client_exchange(port, host="127.0.0.1"):
    c = Client(port, host=host)
    try:
        c.auth(0x1, expect_method=0)
        check(c.impi(0) == 1, "IMPI size")
        c.done()
        c.expect_done()
        c.fini()
        c.expect_closed()
    finally:
        c.close()


def run_server(build, args, auth=None, env=None, timeout=10):
    """Runs impi-server to completion (usage errors): returns the CompletedProcess."""
    environment = clean_env(env)
    environment.update({"IMPI_AUTH_NONE": "1"} if auth is None else auth)
    return subprocess.run([os.path.join(build, "bin", "impi-server")] + args, env=environment,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)


def free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def case_port(build):
    port = free_port()
    s = ServerProcess(build, ["-server", "1", "-port", str(port)])
    try:
        _, got = s.contact()
        check(got == port, f"listening on {got}, asked for {port}")
        one_client_exchange(port)
        check(s.wait() == 0, f"exit status {s.proc.returncode}")
    finally:
        s.kill()


def case_port_in_use(build):
    with socket.socket() as busy:
        busy.bind(("", 0))
        busy.listen()
        port = busy.getsockname()[1]
        p = run_server(build, ["-server", "1", "-port", str(port)])
    check(p.returncode == 1, f"exit status {p.returncode}")
    check(p.stdout == "", f"stdout {p.stdout!r}")
    lines = p.stderr.splitlines()
    check(len(lines) == 1 and f"cannot listen on port {port}" in lines[0] and "in use" in lines[0],
          f"stderr {p.stderr!r}")


def case_port_range_first_free(build):
    """IMPI_SERVER_PORT_RANGE=a:b: the first port of the range is taken, the server gets the next one."""
    for attempt in range(20):
        with socket.socket() as busy:
            busy.bind(("", 0))
            busy.listen()
            first = busy.getsockname()[1]
            if first + 2 > 65535:
                continue
            with socket.socket() as probe:  # is first+1 free?
                try:
                    probe.bind(("", first + 1))
                except OSError:
                    continue
            s = ServerProcess(build, ["-server", "1"], env={"IMPI_SERVER_PORT_RANGE": f"{first}:{first + 2}"})
            try:
                _, got = s.contact()
                check(got == first + 1, f"got port {got}, expected {first + 1} (range {first}:{first + 2})")
                one_client_exchange(got)
                check(s.wait() == 0, f"exit status {s.proc.returncode}")
            finally:
                s.kill()
            return
    raise Fail("could not set up a port range with a busy first port")


def case_port_range_full_or_bad(build):
    with socket.socket() as busy:
        busy.bind(("", 0))
        busy.listen()
        port = busy.getsockname()[1]
        p = run_server(build, ["-server", "1"], env={"IMPI_SERVER_PORT_RANGE": f"{port}:{port}"})
    check(p.returncode == 1, f"full range: exit status {p.returncode}")
    check(f"no free port in IMPI_SERVER_PORT_RANGE={port}:{port}" in p.stderr and len(p.stderr.splitlines()) == 1,
          f"full range: stderr {p.stderr!r}")
    p = run_server(build, ["-server", "1"], env={"IMPI_SERVER_PORT_RANGE": "40000-40010"})
    check(p.returncode == 2, f"bad range: exit status {p.returncode}")
    check("IMPI_SERVER_PORT_RANGE='40000-40010'" in p.stderr and len(p.stderr.splitlines()) == 1,
          f"bad range: stderr {p.stderr!r}")


def case_out_file_and_pid(build):
    """-out FILE: the line goes to FILE (not stdout); -pid adds the server's pid as a second line."""
    s = None
    path = None
    try:
        s = ServerProcess(build, ["-server", "1", "-out", "addr.txt", "-pid"])
        path = os.path.join(s.dir, "addr.txt")
        deadline = time.monotonic() + 10
        while not os.path.exists(path) and time.monotonic() < deadline:
            check(s.running(), f"exited early: {s.stderr()!r}")
            time.sleep(0.02)
        with open(path) as f:
            lines = f.read().split("\n")
        check(len(lines) == 3 and lines[2] == "", f"file content {lines!r}")
        check(lines[1] == str(s.pid), f"pid line {lines[1]!r}, server pid {s.pid}")
        port = int(lines[0].rsplit(":", 1)[1])
        one_client_exchange(port)
        check(s.wait() == 0, f"exit status {s.proc.returncode}")
        check(s.stdout() == "", f"stdout should be empty with -out: {s.stdout()!r}")
        leftovers = [n for n in os.listdir(s.dir) if ".tmp." in n]
        check(not leftovers, f"temporary files left: {leftovers}")
    finally:
        if s:
            s.kill()
    p = run_server(build, ["-server", "1", "-out", "/nonexistent-dir/addr.txt"])
    check(p.returncode == 1 and "-out /nonexistent-dir/addr.txt" in p.stderr, f"unwritable -out: {p!r}")


def case_nl_and_host(build):
    s = ServerProcess(build, ["-server", "1", "-nl", "-host", "127.0.0.1"])
    try:
        addr, port = s.contact()
        check(addr == "127.0.0.1", f"-host 127.0.0.1 printed {addr}")
        one_client_exchange(port)
        check(s.wait() == 0, f"exit status {s.proc.returncode}")
        check(s.stdout() == f"127.0.0.1:{port}\n\n", f"-nl stdout {s.stdout()!r}")
    finally:
        s.kill()
    s = ServerProcess(build, ["-server", "1", "-host", "localhost"])
    try:
        addr, port = s.contact()
        check(addr.startswith("127."), f"-host localhost printed {addr}")
        one_client_exchange(port)
        check(s.wait() == 0, f"exit status {s.proc.returncode}")
    finally:
        s.kill()


def process_gone(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie nobody reaped yet
    except FileNotFoundError:
        return True


def case_background(build):
    """-bg -pid: the command returns at once (stdout closed by the child), the child serves the job and exits."""
    environment = clean_env({"IMPI_AUTH_NONE": "1"})
    child = None
    err_path = None
    try:
        import tempfile
        err = tempfile.NamedTemporaryFile(prefix="impi-server-bg-", delete=False)
        err_path = err.name
        start = time.monotonic()
        # stdout is a pipe read to EOF: this returns only if the child let go of it.
        p = subprocess.run([os.path.join(build, "bin", "impi-server"), "-server", "1", "-bg", "-pid"],
                           env=environment, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                           text=True, timeout=10)
        err.close()
        elapsed = time.monotonic() - start
        lines = p.stdout.split("\n")
        check(p.returncode == 0, f"exit status {p.returncode}")
        check(len(lines) == 3 and lines[2] == "", f"stdout {p.stdout!r}")
        child = int(lines[1])
        check(elapsed < 5, f"-bg took {elapsed:.1f} s to return")
        check(not process_gone(child), f"background server {child} is not running")
        port = int(lines[0].rsplit(":", 1)[1])
        one_client_exchange(port)
        deadline = time.monotonic() + 10
        while not process_gone(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        check(process_gone(child), "background server still running after its job ended")
        child = None
        with open(err_path) as f:
            check(f.read() == "", "background server wrote on stderr")
    finally:
        if child and not process_gone(child):
            os.kill(child, signal.SIGKILL)
        if err_path:
            os.unlink(err_path)


def case_missing_or_bad_auth(build):
    p = run_server(build, ["-server", "2"], auth={})
    check(p.returncode == 2, f"no auth: exit status {p.returncode}")
    check(p.stdout == "", f"no auth: stdout {p.stdout!r}")
    lines = p.stderr.splitlines()
    check(len(lines) == 1 and lines[0].startswith("impi-server: no IMPI authentication is enabled") and
          "IMPI_AUTH_NONE" in lines[0] and "IMPI_AUTH_KEY" in lines[0], f"no auth: stderr {p.stderr!r}")
    p = run_server(build, ["-server", "2"], auth={"IMPI_AUTH_KEY": "-5"})
    check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and 'IMPI_AUTH_KEY is "-5"' in p.stderr,
          f"bad key: {p.returncode} {p.stderr!r}")


def case_bad_flags(build):
    bad = [
        (["-server", "2", "-foo"], "unknown option '-foo'"),
        (["-server", "2", "extra"], "unexpected argument 'extra'"),
        ([], "-server M is required"),
        (["-server"], "-server needs a value"),
        (["-server", "0"], "-server 0: the number of clients must be 1..32"),
        (["-server", "33"], "-server 33: the number of clients must be 1..32"),
        (["-server", "two"], "-server two:"),
        (["-server", "2", "-port", "70000"], "-port 70000: use a port number"),
        (["-server", "2", "-port"], "-port needs a value"),
        (["-server", "2", "-ipv", "6"], "IPv6 is not supported"),
        (["-server", "2", "-ipv", "5"], "-ipv 5: use 4"),
        (["-server", "2", "-host", "no-such-host.invalid"], "-host no-such-host.invalid: cannot resolve"),
    ]
    for args, text in bad:
        p = run_server(build, args)
        check(p.returncode == 2, f"{args}: exit status {p.returncode}")
        check(p.stdout == "", f"{args}: stdout {p.stdout!r}")
        lines = p.stderr.splitlines()
        check(len(lines) == 1 and lines[0].startswith("impi-server: ") and text in lines[0],
              f"{args}: stderr {p.stderr!r}, expected one line with {text!r}")
    p = run_server(build, ["-help"])
    check(p.returncode == 0 and p.stdout.startswith("usage: impi-server -server M") and p.stderr == "",
          f"-help: {p!r}")
    p = run_server(build, ["-server", "2", "-ipv", "4", "-h"])
    check(p.returncode == 0 and "-bg, -fork" in p.stdout, f"-h: {p!r}")


CASES = {
    "port": case_port,
    "port_in_use": case_port_in_use,
    "port_range_first_free": case_port_range_first_free,
    "port_range_full_or_bad": case_port_range_full_or_bad,
    "out_file_and_pid": case_out_file_and_pid,
    "nl_and_host": case_nl_and_host,
    "background": case_background,
    "missing_or_bad_auth": case_missing_or_bad_auth,
    "bad_flags": case_bad_flags,
}

if __name__ == "__main__":
    sys.exit(run_cases(CASES, "impi-server end-to-end: options and environment"))
