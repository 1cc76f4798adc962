"""Optional py-spy sampling of the broker during the throughput phases.

Why built in: the useful output for the broker's authors is "which functions burn the CPU while
a real client pushes 100-byte messages", and attaching by hand to a broker the bench starts and
stops itself is fiddly. ``--profile DIR`` records raw (collapsed) stacks and this module turns
them into the top self/inclusive hot spots with file:function names.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def py_spy_path() -> str | None:
    """py-spy next to this interpreter (the venv) or on PATH."""
    local = Path(sys.executable).with_name("py-spy")
    if local.exists():
        return str(local)
    return shutil.which("py-spy")


class Recorder:
    """``py-spy record`` attached to a pid, writing collapsed stacks; stop() ends it cleanly."""

    def __init__(self, pid: int, out: Path, rate: int = 200, native: bool = False) -> None:
        exe = py_spy_path()
        if exe is None:
            raise RuntimeError("py-spy not installed (.venv/bin/pip install py-spy)")
        self.out = out
        cmd = [exe, "record", "--pid", str(pid), "--rate", str(rate), "--format", "raw"]
        cmd += ["--output", str(out), "--threads"]
        # --native resolves C frames (uvloop, memcpy, syscalls) but must pause the process for
        # each sample; without it py-spy reads the stacks without stopping the broker.
        cmd += ["--native"] if native else ["--nonblocking"]
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def stop(self) -> str | None:
        """SIGINT makes py-spy write its output; returns an error text if it failed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate(timeout=5)
        if not self.out.exists():
            return (err or b"").decode(errors="replace").strip().splitlines()[-1:] or ["no output"]  # type: ignore[return-value]
        return None


@dataclass
class HotSpot:
    """One function's share of the broker's sampled (non-idle) time."""

    where: str
    self_pct: float
    total_pct: float


def _short(file: str) -> str:
    """Repo-relative for project files, ``pkg/...`` for site-packages, else the basename."""
    for marker in ("/site-packages/", "/work/main/"):
        if marker in file:
            return file.split(marker, 1)[1]
    if "/lib/python3" in file:
        return "stdlib/" + file.rsplit("/", 1)[-1]
    return file


def _frame_name(frame: str) -> str:
    m = _FRAME.match(frame.strip())
    if not m:
        return frame.strip()
    return f"{_short(m.group('file'))}:{m.group('func')}"


_IDLE_LEAVES = ("epoll_wait", "epoll_pwait", "poll", "select", "pthread_cond_wait", "sem_wait")
_IDLE_FRAMES = ("PyThread_acquire_lock_timed", "threading.py:Condition.wait", "take_gil")


def _idle(names: list[str]) -> bool:
    """Whether a stack is waiting rather than working.

    Without ``--native`` py-spy drops idle samples itself; with it, a thread blocked in epoll or
    on a lock still shows up, and would be read as CPU time.
    """
    leaf = names[-1].rsplit(":", 1)[-1]
    if leaf in _IDLE_LEAVES:
        return True
    return any(marker in name for name in names for marker in _IDLE_FRAMES)


def _parse(collapsed: Path) -> tuple[Counter[str], Counter[str], int]:
    """Self and inclusive sample counts per ``file:function`` from py-spy's raw output.

    Line numbers are dropped so a function's samples add up across its lines; the thread
    frame py-spy prepends with ``--threads`` is skipped.
    """
    self_c: Counter[str] = Counter()
    total_c: Counter[str] = Counter()
    samples = 0
    for line in collapsed.read_text(errors="replace").splitlines():
        stack, _, count_s = line.rpartition(" ")
        if not stack or not count_s.isdigit():
            continue
        count = int(count_s)
        names = [_frame_name(f) for f in stack.split(";") if f and not f.startswith("thread (")]
        if not names or _idle(names):
            continue
        samples += count
        self_c[names[-1]] += count
        for name in set(names):
            total_c[name] += count
    return self_c, total_c, samples


def hot_spots(collapsed: Path, top: int = 15) -> tuple[list[HotSpot], int]:
    """The top functions by self time (where the CPU actually is), with inclusive time."""
    self_c, total_c, samples = _parse(collapsed)
    if samples == 0:
        return [], 0
    spots = [
        HotSpot(name, 100.0 * n / samples, 100.0 * total_c[name] / samples)
        for name, n in self_c.most_common(top)
    ]
    return spots, samples


def top_inclusive(collapsed: Path, prefix: str = "broker/", top: int = 15) -> list[HotSpot]:
    """The project's own functions by inclusive time (which code path the time is spent under)."""
    self_c, total_c, samples = _parse(collapsed)
    if samples == 0:
        return []
    ours = [(name, n) for name, n in total_c.most_common() if name.startswith(prefix)][:top]
    return [HotSpot(name, 100.0 * self_c[name] / samples, 100.0 * n / samples) for name, n in ours]
