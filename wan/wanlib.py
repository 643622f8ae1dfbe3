"""Network namespaces joined by gridmpi-wanem (wan/wanem.cpp): the emulated
wide-area link of the tests and benchmarks.  Root only.

    from wanlib import Wan
    with Wan(exe, {"A": "10.93.1.2", "B": "10.93.2.2"}, delay_ms=5) as wan:
        subprocess.run(wan.exec("B", ["./server"]) ...)

Every site is one namespace (named PREFIX<site><pid of the caller>) holding
one TUN device, wan0, with the site's address (a /32) on it; the site's /24
is what the emulator delivers to it, and every other site's /24 is routed
into wan0.  Extra links are the caller's (Wan.veth, Wan.ip): a front end
joined to a private subnet, for example.

On exit (also on an exception) the emulator stops, every process still in a
namespace is killed, and the namespaces go (their devices with them).
Namespaces of an earlier caller that was SIGKILLed are removed first.
"""

import os
import re
import signal
import subprocess
import time

PREFIX = "gmwan"


class WanError(Exception):
    pass


class WanSkip(WanError):
    """Namespaces or TUN devices cannot be made here (not root, no /dev/net/tun)."""


def run_ip(*args, timeout=10):
    p = subprocess.run(["ip"] + list(args), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=timeout)
    if p.returncode != 0:
        raise WanError(f"ip {' '.join(args)}: {p.stderr.strip()}")
    return p.stdout


def pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def pids_in(netns):
    p = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True, timeout=10)
    return [int(x) for x in p.stdout.split()] if p.returncode == 0 else []


def kill_namespace(netns):
    for _ in range(50):
        pids = pids_in(netns)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
    subprocess.run(["ip", "netns", "delete", netns], capture_output=True, timeout=10)


def remove_stale(prefix=PREFIX):
    """Namespaces whose creator (the pid in their name) is gone."""
    try:
        names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return
    for line in names.splitlines():
        m = re.match(rf"({prefix}[A-Za-z]+(\d+))\b", line)
        if m and not pid_alive(int(m.group(2))):
            kill_namespace(m.group(1))


def subnet_of(addr):
    return ".".join(addr.split(".")[:3]) + ".0/24"


class Wan:
    def __init__(self, exe, sites, delay_ms=0.0, rate_mbs=0.0, loss=0.0, delay_from=(), mtu=65000,
                 prefix=PREFIX, extra_ns=(), nic_rate_mbs=0.0):
        """sites: {name: address}, each address the site's own in its /24.
        delay_from: ((site_a, site_b, ms), ...) overrides per direction.
        rate_mbs caps each direction; nic_rate_mbs gives each site one
        interface of that speed (a cluster's nodes on a switch).
        extra_ns: names of further namespaces (no emulator end) to create and clean up."""
        self.exe, self.sites = exe, dict(sites)
        self.delay_ms, self.rate_mbs, self.loss, self.delay_from, self.mtu = delay_ms, rate_mbs, loss, delay_from, mtu
        self.nic_rate_mbs = nic_rate_mbs
        tag = os.getpid()
        self.ns = {k: f"{prefix}{k}{tag}" for k in list(self.sites) + list(extra_ns)}
        self.prefix = prefix
        self.created = []
        self.emulator = None
        self.emulator_log = ""

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def __getitem__(self, site):
        return self.ns[site]

    def exec(self, site, argv):
        return ["ip", "netns", "exec", self.ns[site]] + list(argv)

    def ip(self, site, *args):
        return run_ip("-n", self.ns[site], *args)

    def sysctl(self, site, setting):
        p = subprocess.run(self.exec(site, ["sysctl", "-qw", setting]), capture_output=True, text=True, timeout=10)
        if p.returncode != 0:
            raise WanError(f"sysctl {setting} in {self.ns[site]}: {p.stderr.strip()}")

    def veth(self, site_a, name_a, addr_a, site_b, name_b, addr_b):
        """A veth pair between two namespaces, ADDR/24 on each end."""
        run_ip("link", "add", name_a, "netns", self.ns[site_a], "type", "veth", "peer", "name", name_b,
               "netns", self.ns[site_b])
        for site, name, addr in ((site_a, name_a, addr_a), (site_b, name_b, addr_b)):
            self.ip(site, "addr", "add", addr + "/24", "dev", name)
            self.ip(site, "link", "set", name, "up")

    def start(self):
        if os.geteuid() != 0:
            raise WanSkip("not root: network namespaces need root")
        if not os.path.exists("/dev/net/tun"):
            raise WanSkip("no /dev/net/tun")
        remove_stale(self.prefix)
        for site, name in self.ns.items():
            try:
                run_ip("netns", "add", name)
            except WanError as e:
                if not self.created:
                    raise WanSkip(f"cannot create network namespaces here: {e}")
                raise
            self.created.append(name)
            self.ip(site, "link", "set", "lo", "up")
        argv = [self.exe, "--delay", str(self.delay_ms)]
        for site, addr in self.sites.items():
            argv += ["--end", f"{self.ns[site]}={subnet_of(addr)}"]
        for a, b, ms in self.delay_from:
            argv += ["--delay-from", f"{self.ns[a]}:{self.ns[b]}={ms}"]
        if self.rate_mbs:
            argv += ["--rate", str(self.rate_mbs)]
        if self.nic_rate_mbs:
            argv += ["--nic-rate", str(self.nic_rate_mbs)]
        if self.loss:
            argv += ["--loss", str(self.loss)]
        self.emulator = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, start_new_session=True)
        line = self.emulator.stdout.readline()
        if line.strip() != "ready":
            self.emulator.wait(timeout=10)
            raise WanError("gridmpi-wanem did not start: " + (line + self.emulator.stderr.read()).strip())
        for site, addr in self.sites.items():
            # No IPv6 on the emulated link: only IPv4 crosses it.
            self.sysctl(site, "net.ipv6.conf.wan0.disable_ipv6=1")
            self.ip(site, "link", "set", "wan0", "mtu", str(self.mtu), "txqueuelen", "10000", "up")
            self.ip(site, "addr", "add", addr + "/32", "dev", "wan0")
            for other, other_addr in self.sites.items():
                if other != site:
                    self.ip(site, "route", "add", subnet_of(other_addr), "dev", "wan0", "src", addr)

    def counters(self):
        """The emulator's per-direction counters (it prints them on SIGUSR1)."""
        return self.emulator_log

    def stop(self):
        if self.emulator is not None and self.emulator.poll() is None:
            self.emulator.send_signal(signal.SIGTERM)
            try:
                _, err = self.emulator.communicate(timeout=10)
                self.emulator_log = err
            except subprocess.TimeoutExpired:
                os.killpg(self.emulator.pid, signal.SIGKILL)
                self.emulator.wait()
        self.emulator = None
        for name in reversed(self.created):
            kill_namespace(name)
        self.created = []

    def leftovers(self):
        """Namespaces of this object that still exist (none after stop)."""
        names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=10).stdout
        return [n for n in self.ns.values() if re.search(rf"^{n}\b", names, re.M)]
