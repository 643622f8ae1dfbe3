"""Helpers shared by the benchmark drivers of npb/ (run, impi-bench,
vendor-bench, peer-bench, bcast-bench, coll-choice-bench): sizes with k/m suffixes, the result lines of the C
benchmarks, runs in their own session with a time limit, Open MPI's
leftover shared-memory files, medians with their spread, back-to-back
pairs, markdown tables, gnuplot, the libraries forced onto a path.  Numbers are printed, never checked."""

import glob
import os
import re
import selectors
import shutil
import signal
import statistics
import subprocess
import sys
import time

# impi_pingpong / tcp_pingpong, one line per size (impi_pingpong.c)
PP = re.compile(r"^PP bytes=(\d+) iters=(\d+) lat_avg_us=([0-9.]+) lat_min_us=([0-9.]+) "
                r"mbps_avg=([0-9.]+) mbps_best=([0-9.]+)", re.M)
# impi_pingpong --stream
ST = re.compile(r"^ST bytes=(\d+) window=(\d+) iters=(\d+) mbps_avg=([0-9.]+) mbps_best=([0-9.]+) "
                r"us_per_msg=([0-9.]+)", re.M)
# coll_bench; group 8 is " WRONG" when the result check failed
CB = re.compile(r"^CB op=(\w+) np=(\d+) bytes=(\d+) iters=(\d+) time_avg_us=([0-9.]+) time_min_us=([0-9.]+) "
                r"mbps=([0-9.]+)(.*)$", re.M)
# the NPB kernels' result line (npb_common.c)
NPB = re.compile(r"^NPB (\w+) class=(\w) np=(\d+) time=([0-9.eE+-]+) mops=([0-9.eE+-]+) verification=(\w+)",
                 re.M)


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
    return run_results(cmd, env, timeout, log=log, title=title)[0]


def run_results(cmd, env, timeout, finished=None, grace=5, log=None, title=""):
    """run(), for a program whose results can be told complete from its
    output: once finished(output so far) holds, the run gets grace more
    seconds to exit, then its session is stopped and its output counts all
    the same (an MPI job can hang in MPI_Finalize after its results: MPICH
    over UCX's TCP transport, openucx/ucx#8738).  Returns (output, True
    when it was stopped so)."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    chunks, deadline, lingered, timed_out = [], start + timeout, False, False
    fd = p.stdout.fileno()
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = not (finished and finished(b"".join(chunks).decode(errors="replace")))
                lingered = not timed_out
                break
            if sel.select(timeout=min(left, 1.0)):
                data = os.read(fd, 65536)
                if not data:
                    break
                chunks.append(data)
                if finished and deadline > time.monotonic() + grace and \
                        finished(b"".join(chunks).decode(errors="replace")):
                    deadline = time.monotonic() + grace
    if not (timed_out or lingered):
        try:  # the output is closed; the launcher may still be exiting
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    if timed_out or lingered:
        stop([p])
    p.stdout.close()
    text = b"".join(chunks).decode(errors="replace")
    state = "TIMED OUT" if timed_out else "stopped %d s after its results: no exit" % grace if lingered else \
        "%.2f s" % (time.monotonic() - start)
    if log:
        log.write("$ %s  # %s (%s)\n%s\n" % (" ".join(cmd), title, state, text))
        log.flush()
    if timed_out:
        raise RunError("%s: no result within %d s" % (title or cmd[0], timeout))
    if p.returncode != 0 and not lingered:
        last = [l for l in text.splitlines() if l.strip()][-1:] or ["(no output)"]
        raise RunError("%s exited with %d: %s" % (title or cmd[0], p.returncode, last[0]))
    return text, lingered


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


def spread(values, spec):
    """The values' median with their range, as "median [min-max]" (None
    values left out); the value alone when there is one, "-" for none."""
    v = [x for x in values if x is not None]
    if not v:
        return "-"
    if len(v) == 1:
        return spec % v[0]
    return "%s [%s-%s]" % (spec % statistics.median(v), spec % min(v), spec % max(v))


def pair_medians(pairs, value, relation="ratio"):
    """Pairs (reference, measured) of results of two runs made back to back,
    e.g. the peer MPI's and gridmpi's: this VM's memory speed changes
    between invocations (in two states), and a pair mostly sees one of them.
    value(result) picks the number; returns (median of the references,
    median of the measured, median of the per-pair measured/reference
    ("ratio") or measured - reference ("diff")), None where there is no
    pair."""
    got = [(value(a), value(b)) for a, b in pairs]
    got = [(a, b) for a, b in got if a is not None and b is not None]
    if relation == "ratio":
        rel = [b / a for a, b in got if a > 0]
    else:
        rel = [b - a for a, b in got]
    return median([a for a, _ in got]), median([b for _, b in got]), median(rel)


def vader_segments():
    """Open MPI's shared-memory files (btl/vader) now in /dev/shm."""
    return set(glob.glob("/dev/shm/vader_segment.*"))


def remove_unmapped(paths):
    """Removes those of paths (files some run of ours left, e.g. new
    vader_segments() after a run that was killed) that no process maps or
    holds open any more: never those of someone else's live job."""
    if not paths:
        return
    time.sleep(0.2)
    busy = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/maps" % d) as f:
                text = f.read()
        except OSError:
            continue
        busy.update(p for p in paths if p in text)
    for p in set(paths) - busy:
        try:
            os.unlink(p)
        except OSError:
            pass


def gnuplot(script, png, who):
    """Runs a gnuplot script that writes png; prints where it went, or why
    there is no plot (who: the driver's name, for the message)."""
    if not shutil.which("gnuplot"):
        print("%s: gnuplot is not installed (scripts/install-deps installs gnuplot-nox): no plot" % who,
              file=sys.stderr)
        return False
    r = subprocess.run(["gnuplot"], input=script.encode(), capture_output=True)
    if r.returncode != 0:
        print("%s: gnuplot failed: %s" % (who, r.stderr.decode(errors="replace").strip()), file=sys.stderr)
        return False
    print("plot: %s" % png)
    return True


def two_cluster_job(wan, server, mpirun, sites, nps, argv, env, timeout, log, work_dir, cluster_env=None):
    """One MPI job of two clusters through wan (wan/wanlib.py's Wan):
    impi-server and cluster 0 (`mpirun -client 0 -np nps[0]`) in site A,
    cluster 1 (`-client 1 -np nps[1]`) in site B; sites maps "A"/"B" to their
    addresses.  Every process under `timeout` seconds.  Returns (cluster 0's
    stdout, both clusters' stderr); RunError when a cluster fails."""
    out = os.path.join(work_dir, "server.addr")
    if os.path.exists(out):
        os.unlink(out)
    limit = str(int(timeout))
    srv = subprocess.Popen(wan.exec("A", ["timeout", limit, server, "-server", "2", "-host", sites["A"], "-out", out]),
                           env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    address, deadline = None, time.monotonic() + 20
    while time.monotonic() < deadline and not address and srv.poll() is None:
        if os.path.exists(out):
            address = open(out).read().strip() or None
        time.sleep(0.05)
    if not address:
        srv.kill()
        raise RunError("impi-server did not print its address: %s" % srv.communicate()[0])
    clients = [subprocess.Popen(wan.exec(site, ["timeout", limit, mpirun, "-client", str(k), address,
                                                "-np", str(nps[k])] + argv),
                                env=dict(env, **(cluster_env or {})), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for k, site in enumerate("AB")]
    results = [c.communicate(timeout=timeout + 20) for c in clients]
    srv.communicate(timeout=20)
    if log:
        log.write("$ %d + %d through %g ms: %s\n%s\n" % (nps[0], nps[1], wan.delay_ms, " ".join(argv),
                                                        "".join("--- client %d\n%s%s" % (k, o, e)
                                                                for k, (o, e) in enumerate(results))))
        log.flush()
    for k, c in enumerate(clients):
        if c.returncode != 0:
            raise RunError("%d + %d at %g ms: %s: client %d exit %d: %s" % (nps[0], nps[1], wan.delay_ms,
                                                                          " ".join(argv), k, c.returncode,
                                                                          results[k][1][-500:]))
    return results[0][0], "".join(e for _, e in results)



class EmulatedCluster:
    """A cluster of `nodes` hosts on this machine: one network namespace per
    node (10.94.<i+1>.2), one process per node, joined by gridmpi-wanem
    with one interface of nic_rate_mbs per node (--nic-rate: what a node
    sends shares its interface, what it receives its switch port) and
    delay_ms one-way, MTU 9000.  mpirun runs in node 0 and starts the others
    through wan/netns-rsh.  Use as a context manager (namespaces and
    emulator go at exit); job(argv) runs `mpirun -c HOSTS -np nodes argv`."""

    def __init__(self, wanem, mpirun, nodes, nic_rate_mbs, delay_ms, work_dir):
        wan_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "wan")
        if wan_dir not in sys.path:
            sys.path.insert(0, wan_dir)
        from wanlib import Wan  # noqa: E402
        self.nodes, self.mpirun = nodes, mpirun
        # Site names of letters only: wanlib finds a namespace's creator by
        # the digits after them.
        self.sites = {"N" + chr(97 + i // 26) + chr(97 + i % 26): "10.94.%d.2" % (i + 1) for i in range(nodes)}
        self.first = next(iter(self.sites))
        self.wan = Wan(wanem, self.sites, delay_ms=delay_ms, nic_rate_mbs=nic_rate_mbs, mtu=9000, prefix="gmcl")
        self.hosts = os.path.join(work_dir, "cluster-hosts-%d" % nodes)
        with open(self.hosts, "w") as f:
            f.write("".join(addr + "\n" for addr in self.sites.values()))
        self.rsh = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "wan", "netns-rsh")

    def __enter__(self):
        self.wan.__enter__()
        return self

    def __exit__(self, *exc):
        return self.wan.__exit__(*exc)

    def env(self, env):
        e = dict(env, _YAMPI_RSH=self.rsh,
                 GRIDMPI_NETNS_HOSTS=" ".join("%s=%s" % (a, self.wan[s]) for s, a in self.sites.items()))
        e.pop("MPIROOT", None)
        return e

    def command(self, argv, timeout, np_=None):
        """The argv running `argv` under this cluster's mpirun (node 0)."""
        return self.wan.exec(self.first, ["timeout", str(int(timeout)), self.mpirun, "-c", self.hosts,
                                    "-np", str(np_ or self.nodes)] + list(argv))

    def job(self, argv, env, timeout, log=None, title=""):
        return run(self.command(argv, timeout), self.env(env), timeout + 20, log, title)


class PathLibs:
    """gridmpi, Open MPI and MPICH, each forced onto a path (shm or tcp) as
    peer-bench forces them, with one C program built by each (bcast-bench,
    coll-choice-bench).  env: the environment for every run (Open MPI's
    root permission as root); libs: gridmpi and the peers installed (none
    with peers=False); exe: the program of each; command(lib, path, np_):
    the launcher's argv and its extra environment."""

    PEERS = ("openmpi", "mpich")

    def __init__(self, bin_dir, source, tmp, log, peers=True):
        self.bin = bin_dir
        self.env = dict(os.environ)
        self.ompi_run = ["mpirun.openmpi", "--oversubscribe"]
        if os.geteuid() == 0:
            self.ompi_run.append("--allow-run-as-root")
            self.env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        self.libs = ["gridmpi"] + ([l for l in self.PEERS if self.have(l)] if peers else [])
        compilers = {"gridmpi": os.path.join(bin_dir, "mpicc"), "openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}
        name = os.path.splitext(os.path.basename(source))[0]
        self.exe = {}
        for lib in self.libs:
            out = os.path.join(tmp, "%s.%s" % (name, lib))
            run([compilers[lib], "-O2", "-o", out, source], self.env, 300, log, "build %s with %s" % (name, lib))
            self.exe[lib] = out

    @staticmethod
    def have(lib):
        return any(os.access(os.path.join(d, "mpicc." + lib), os.X_OK) for d in os.environ["PATH"].split(":"))

    def command(self, lib, path, np_):
        if lib == "gridmpi":
            return [os.path.join(self.bin, "mpirun")] + (["-nounix"] if path == "tcp" else []) + ["-np", str(np_)], {}
        if lib == "openmpi":
            btl = "self,vader" if path == "shm" else "self,tcp"
            return self.ompi_run + ["--mca", "pml", "ob1", "--mca", "btl", btl, "-n", str(np_)], {}
        return ["mpiexec.mpich", "-n", str(np_)], ({"MPIR_CVAR_NOLOCAL": "1", "UCX_TLS": "tcp,self"}
                                                  if path == "tcp" else {})
