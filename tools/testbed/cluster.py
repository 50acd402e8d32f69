"""An emulated cluster on one Linux host: hosts as network namespaces joined
by a Linux bridge (the switch), each host's link shaped in both directions by
a token-bucket filter (tc tbf), ranks pinned to cores and capped by cgroup
CPU quotas.

    switch namespace  ssgd-tb-sw:  bridge br0, ports p0 .. pN-1
    host namespaces   ssgd-tb-h0 .. ssgd-tb-hN-1: eth0 = 10.213.0.(k+1)/24

Every object it creates carries the prefix `ssgd-tb` so that `teardown()`
finds leftovers of a killed run. Needs root, iproute2 and the kernel's
network namespaces, veth, bridge and sch_tbf. No added delay: sch_netem is
not available on the machines this was built on, so a link's latency is the
veth's own (tens of microseconds).
"""

import os
import shutil
import subprocess

PREFIX = "ssgd-tb"
SWITCH = PREFIX + "-sw"
SUBNET = "10.213.0"
CGROUP_CPU = "/sys/fs/cgroup/cpu"          # cgroup v1 cpu controller
CGROUP_V2 = "/sys/fs/cgroup/unified"       # cgroup v2 (hybrid) or /sys/fs/cgroup (pure v2)


class TestbedError(Exception):
    """A refusal or failure with a message for the user."""


def host_ns(k):
    return f"{PREFIX}-h{k}"


def host_ip(k):
    return f"{SUBNET}.{k + 1}"


def _run(args, check=True, quiet=False):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and r.returncode != 0:
        raise TestbedError(f"command failed ({r.returncode}): {' '.join(args)}: {r.stderr.strip()}")
    return r


def parse_rate_bits(text):
    """'1gbit', '200mbit', '100Mbit/s', 'unshaped' -> bits per second (None =
    unshaped). Raises ValueError naming the value."""
    t = str(text).strip().lower().replace("/s", "").replace("bps", "bit")
    if t in ("", "none", "unshaped", "0"):
        return None
    units = {"gbit": 10**9, "mbit": 10**6, "kbit": 10**3, "bit": 1}
    for unit, mult in units.items():
        if t.endswith(unit):
            number = t[: -len(unit)]
            try:
                value = float(number)
            except ValueError:
                break
            if value <= 0:
                break
            return int(value * mult)
    raise ValueError(f"link rate '{text}': expected e.g. 1gbit, 200mbit or unshaped")


def rate_label(bits):
    if bits is None:
        return "unshaped"
    if bits % 10**9 == 0:
        return f"{bits // 10**9}gbit"
    if bits % 10**6 == 0:
        return f"{bits // 10**6}mbit"
    return f"{bits}bit"


def preflight():
    """Refuses clearly when the emulated cluster cannot be built here."""
    if os.geteuid() != 0:
        raise TestbedError("the testbed needs root (network namespaces, tc, cgroups): run it as root")
    for tool in ("ip", "tc", "taskset"):
        if shutil.which(tool) is None:
            raise TestbedError(f"'{tool}' is missing: install iproute2 and util-linux")
    probe = f"{PREFIX}-probe"
    r = _run(["ip", "netns", "add", probe], check=False)
    if r.returncode != 0:
        raise TestbedError("network namespaces are unavailable here (ip netns add failed: "
                           f"{r.stderr.strip()}); the testbed needs CAP_SYS_ADMIN and netns support")
    try:
        r = _run(["ip", "-n", probe, "link", "add", "v0", "type", "veth", "peer", "name", "v1"], check=False)
        if r.returncode != 0:
            raise TestbedError(f"veth pairs are unavailable: {r.stderr.strip()}")
        r = _run(["tc", "-n", probe, "qdisc", "add", "dev", "v0", "root", "tbf", "rate", "100mbit",
                  "burst", "64kb", "latency", "50ms"], check=False)
        if r.returncode != 0:
            raise TestbedError(f"tc tbf is unavailable (sch_tbf): {r.stderr.strip()}")
    finally:
        _run(["ip", "netns", "del", probe], check=False)


def cpu_cgroup_available():
    return os.path.isdir(CGROUP_CPU) and os.access(CGROUP_CPU, os.W_OK)


class Loopback:
    """No emulated network: every rank on this machine's loopback interface,
    for machines without network namespaces (testbed.py run --loopback). Links
    cannot be shaped: only the rate "unshaped" runs."""

    def __init__(self, hosts):
        self.hosts = hosts
        self.rate_bits = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def shape(self, rate_bits):
        if rate_bits is not None:
            raise TestbedError(f"--loopback: the link rate {rate_label(rate_bits)} needs the emulated "
                               "network (tc on veths); loopback runs 'unshaped' only")


class Cluster:
    """N hosts on one switch. Use as a context manager: the namespaces, veths,
    qdiscs and cgroups are removed on every exit path (exceptions included;
    testbed.py also tears down on SIGINT/SIGTERM, and `teardown()` after a
    SIGKILL)."""

    def __init__(self, hosts):
        if not 1 <= hosts <= 64:
            raise TestbedError(f"hosts: {hosts}: expected 1 to 64")
        self.hosts = hosts
        self.rate_bits = None
        self._up = False

    def __enter__(self):
        self.up()
        return self

    def __exit__(self, *exc):
        self.down()
        return False

    def up(self):
        teardown()  # leftovers of an earlier, killed run
        self._up = True
        _run(["ip", "netns", "add", SWITCH])
        _run(["ip", "-n", SWITCH, "link", "add", "br0", "type", "bridge"])
        _run(["ip", "-n", SWITCH, "link", "set", "br0", "up"])
        _run(["ip", "-n", SWITCH, "link", "set", "lo", "up"])
        for k in range(self.hosts):
            ns = host_ns(k)
            _run(["ip", "netns", "add", ns])
            _run(["ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", f"p{k}",
                  "netns", SWITCH])
            _run(["ip", "-n", SWITCH, "link", "set", f"p{k}", "master", "br0"])
            _run(["ip", "-n", SWITCH, "link", "set", f"p{k}", "up"])
            _run(["ip", "-n", ns, "addr", "add", f"{host_ip(k)}/24", "dev", "eth0"])
            _run(["ip", "-n", ns, "link", "set", "eth0", "up"])
            _run(["ip", "-n", ns, "link", "set", "lo", "up"])

    def shape(self, rate_bits):
        """Every host link at `rate_bits` in both directions (None: unshaped)."""
        self.rate_bits = rate_bits
        for k in range(self.hosts):
            for ns, dev in ((host_ns(k), "eth0"), (SWITCH, f"p{k}")):
                _run(["tc", "-n", ns, "qdisc", "del", "dev", dev, "root"], check=False)
                if rate_bits is None:
                    continue
                # burst: at least 4 ms of traffic at the rate (HZ-independent), and a
                # queue of 50 ms before tbf drops.
                burst = max(32 * 1024, rate_bits // 8 // 250)
                _run(["tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "tbf", "rate",
                      str(rate_bits), "burst", str(burst), "latency", "50ms"])

    def down(self):
        if self._up:
            teardown()
            self._up = False


def teardown():
    """Removes every namespace and cgroup named ssgd-tb*; safe to call twice.
    Deleting a namespace removes its veths, bridge and qdiscs with it."""
    r = _run(["ip", "netns", "list"], check=False)
    for line in r.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        if name.startswith(PREFIX):
            for pid in _run(["ip", "netns", "pids", name], check=False).stdout.split():
                try:
                    os.kill(int(pid), 9)
                except (ProcessLookupError, ValueError):
                    pass
            _run(["ip", "netns", "del", name], check=False)
    cg = os.path.join(CGROUP_CPU, PREFIX)
    if os.path.isdir(cg):
        for child in sorted(os.listdir(cg)):
            path = os.path.join(cg, child)
            if os.path.isdir(path):
                _drain_cgroup(path)
                try:
                    os.rmdir(path)
                except OSError:
                    pass
        try:
            os.rmdir(cg)
        except OSError:
            pass


def _drain_cgroup(path):
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            pids = [int(p) for p in f.read().split()]
    except OSError:
        return
    for pid in pids:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


def rank_cgroup(rank, cpu_fraction, period_us=10000):
    """A cpu cgroup capping one rank at `cpu_fraction` of a core (cfs quota
    over a 10 ms period); returns its cgroup.procs path, or None when the
    fraction is 1 or more (pinning alone) . Raises TestbedError when quotas
    are needed but the cpu controller is not writable."""
    if cpu_fraction >= 1:
        return None
    if not cpu_cgroup_available():
        raise TestbedError("cpu_per_rank < 1 needs the cgroup v1 cpu controller at "
                           f"{CGROUP_CPU} (writable, as root)")
    base = os.path.join(CGROUP_CPU, PREFIX)
    os.makedirs(base, exist_ok=True)
    path = os.path.join(base, f"rank{rank}")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "cpu.cfs_period_us"), "w") as f:
        f.write(str(period_us))
    with open(os.path.join(path, "cpu.cfs_quota_us"), "w") as f:
        f.write(str(int(round(period_us * cpu_fraction))))
    return os.path.join(path, "cgroup.procs")
