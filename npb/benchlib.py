"""Helpers shared by the benchmark drivers of npb/ (impi-bench, vendor-bench):
sizes with k/m suffixes, runs in their own session with a time limit, and
markdown tables.  Numbers are printed, never checked."""

import os
import re
import signal
import statistics
import subprocess
import time


class RunError(Exception):
    pass


def parse_bytes(text):
    m = re.fullmatch(r"(\d+)([kKmMgG]?)", text.strip())
    if not m:
        raise ValueError(text)
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]


def size_text(n):
    for unit, div in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= div and n % div == 0:
            return "%d%s" % (n // div, unit)
    return str(n)


def stop(procs):
    """SIGTERM to each process's session, SIGKILL after 3 s."""
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
    deadline = time.monotonic() + 3
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            p.wait()


def spawn(cmd, env, out):
    return subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True)


def run(cmd, env, timeout, log=None, title=""):
    """Runs cmd in a session of its own; returns its output.  RunError when
    it fails or exceeds timeout seconds (the whole session is stopped)."""
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop([p])
        out = (p.stdout.read() if p.stdout else b"") or b""
        text = out.decode(errors="replace")
        if log:
            log.write("$ %s  # %s (TIMED OUT)\n%s\n" % (" ".join(cmd), title, text))
        raise RunError("%s: no result within %d s" % (title or cmd[0], timeout))
    text = out.decode(errors="replace")
    if log:
        log.write("$ %s  # %s\n%s\n" % (" ".join(cmd), title, text))
        log.flush()
    if p.returncode != 0:
        last = [l for l in text.splitlines() if l.strip()][-1:] or ["(no output)"]
        raise RunError("%s exited with %d: %s" % (title or cmd[0], p.returncode, last[0]))
    return text


def table(header, rows):
    widths = [max(len(str(r[c])) for r in rows + [header]) for c in range(len(header))]
    lines = ["| " + " | ".join(str(h).ljust(w) for h, w in zip(header, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    return "\n".join(lines)


def median(values):
    return statistics.median(values) if values else None


def fmt(v, spec):
    return spec % v if v is not None else "-"
