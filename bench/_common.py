"""Shared pieces of the broker benchmark: result rows, time budgets, machine facts, RSS.

Kept apart from the workloads so the Kafka, peer and reporting modules agree on one row type and
one notion of "how much time is left" without importing each other.
"""

from __future__ import annotations

import os
import platform
import shutil
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

MESSAGE_SIZE = 100
"""Payload bytes per message, for every system: the issue's workload is 100-byte messages."""


@dataclass
class Row:
    """One line of the result table; ``None`` figures print as a dash.

    ``note`` carries anything a reader needs to trust or discount the figure (a skip reason, a
    time cap that cut a phase short, how a ceiling was measured).
    """

    system: str
    workload: str
    partitions: str = ""
    acks: str = ""
    msgs_per_s: float | None = None
    mb_per_s: float | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    ratio: float | None = None
    rss_mb: float | None = None
    target: str = ""
    passed: bool | None = None
    note: str = ""

    @classmethod
    def skipped(cls, system: str, workload: str, reason: str, **kw: str) -> Row:
        """A row that could not be measured, with the reason in place of figures."""
        return cls(system=system, workload=workload, note=f"n/a: {reason}", **kw)  # type: ignore[arg-type]


@dataclass
class Budget:
    """Wall-clock budget for the whole run, handed out phase by phase.

    Every loop in the benchmark asks this for a deadline, so a slow or stuck system shortens its
    own phases instead of pushing the run past its promised duration.
    """

    total_s: float
    phase_cap_s: float
    started: float = field(default_factory=time.monotonic)

    def remaining(self) -> float:
        """Seconds left in the whole run (may be negative)."""
        return self.total_s - (time.monotonic() - self.started)

    def phase_deadline(self, cap_s: float | None = None) -> float:
        """Monotonic deadline for one phase: its cap, or what is left of the run if less."""
        cap = self.phase_cap_s if cap_s is None else cap_s
        return time.monotonic() + max(0.0, min(cap, self.remaining()))

    def exhausted(self, reserve_s: float = 0.0) -> bool:
        """True when fewer than ``reserve_s`` seconds are left for the rest of the run."""
        return self.remaining() <= reserve_s


def free_port() -> int:
    """A currently free TCP port on the loopback interface (small race accepted: bench only)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    """Whether something accepts TCP connections at host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _proc_children(pid: int) -> list[int]:
    """Direct children of ``pid`` from /proc (all threads' children lists)."""
    kids: list[int] = []
    task_dir = Path(f"/proc/{pid}/task")
    try:
        for task in task_dir.iterdir():
            text = (task / "children").read_text()
            kids.extend(int(x) for x in text.split())
    except OSError:
        pass
    return kids


def _status_kib(pid: int, key: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def rss_mb(pid: int) -> float | None:
    """Resident memory of ``pid`` plus its descendants, in MB (VmRSS from /proc/<pid>/status).

    Descendants count too: a broker that forks helpers must not look smaller than it is.
    """
    total = 0
    seen: set[int] = set()
    stack = [pid]
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        kib = _status_kib(p, "VmRSS")
        if kib is None and p == pid:
            return None
        total += kib or 0
        stack.extend(_proc_children(p))
    return total / 1024


def peak_rss_mb(pid: int) -> float | None:
    """High-water-mark resident memory (VmHWM) of ``pid`` alone, in MB."""
    kib = _status_kib(pid, "VmHWM")
    return None if kib is None else kib / 1024


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (falls back to platform.processor())."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def mem_total_gib() -> float | None:
    """Physical memory from /proc/meminfo, in GiB."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024 / 1024
    except (OSError, ValueError):
        pass
    return None


def machine_summary(data_dir: str) -> str:
    """One line naming the limits that bound every figure: cores, RAM, disk free, CPU model."""
    cores = os.cpu_count() or 0
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = cores
    mem = mem_total_gib()
    disk = shutil.disk_usage(data_dir)
    mem_s = f"{mem:.1f} GiB RAM" if mem is not None else "RAM unknown"
    return (
        f"{affinity} cores usable ({cores} online), {mem_s}, "
        f"{disk.free / 2**30:.0f} GiB disk free at {data_dir}, {cpu_model()}, "
        f"Linux {platform.release()}, Python {platform.python_version()}"
    )


def _machine_busy_s() -> float | None:
    """CPU seconds all cores spent not idle since boot (from the first line of /proc/stat)."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        ticks = [int(x) for x in fields[:8]]
    except (OSError, ValueError, IndexError):
        return None
    idle = ticks[3] + ticks[4]  # idle + iowait
    return (sum(ticks) - idle) / os.sysconf("SC_CLK_TCK")


def _own_cpu_s() -> float:
    """CPU seconds of this process and of its children that have been waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class CpuMeter:
    """How much CPU *other* processes took while the benchmark ran.

    The machine may be shared (other sessions running test suites); a figure taken while two
    cores are half busy elsewhere is not comparable with one taken on an idle machine, so the
    table says how busy the rest of the machine was. Only exact once every child this bench
    started has exited and been waited for.
    """

    def __init__(self) -> None:
        self.wall0 = time.monotonic()
        self.busy0 = _machine_busy_s()
        self.own0 = _own_cpu_s()

    def foreign_cores(self) -> float | None:
        """Average number of cores busy with processes other than this bench and its children."""
        busy1 = _machine_busy_s()
        if self.busy0 is None or busy1 is None:
            return None
        wall = time.monotonic() - self.wall0
        if wall <= 0:
            return None
        other = (busy1 - self.busy0) - (_own_cpu_s() - self.own0)
        return max(0.0, other / wall)
