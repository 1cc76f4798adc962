"""A/B of two revisions in CPU instructions per line of the file pipeline's hub rows (callgrind).

    .venv/bin/python bench/instructions_ab.py --before f9256f5               # after: this tree
    .venv/bin/python bench/instructions_ab.py --before main~3 --after main --repeats 3
    .venv/bin/python bench/instructions_ab.py --before f9256f5 --lines 10000,30000 --repeats 1

Why instructions, not seconds: on a shared 2-core VM the wall-clock and CPU-time figures of
``file_pipeline_bench.py`` move by 10-15% between runs of the same code, so a 5% regression
cannot be told from noise (and a 2.5x one on a single leg once hid inside it). The number of
instructions the code executes does not depend on what else the machine is doing:
``valgrind --tool=callgrind`` counts them, and repeated runs of one revision agree within
~1-3% at the default line counts.

What is measured: for each revision, a detached ``git worktree`` in a temp dir (the default
``--after`` is the working tree this script lives in, uncommitted changes included), and in it
the hub rows of that checkout's own ``bench/file_pipeline_bench.py``: ``hub leg 1`` (the file
source connector into the broker), ``hub leg 2`` (the file sink connector from that topic to
a file) and ``hub end to end`` (both at once, on a fresh topic), each through an in-process
Herder created over its REST app (``bench/_instructions_driver.py``). Each (revision, line
count, repeat) is one process under callgrind with ``--trace-children=no``; a client request
dumps the counters right before and right after each leg, so a leg's count holds every thread
of the hub process (Python, task threads, librdkafka's threads) during that leg and nothing
else. ``instr/line`` is the slope of a leg's count over the line counts (with two counts,
``(Ir(80k) - Ir(20k)) / 60k``): start-up work, connector creation, group joins and other fixed
costs cancel out.

What is not measured: the broker (a child process, not traced), wall time, waiting, cache
misses and system calls' kernel time; an instruction count is a proxy for CPU time, good for
comparing two versions of the same Python code, not for comparing with C. What still leaks in:
work that runs in proportion to wall time (the Herder's and librdkafka's timers, the driver's
0.2 s polls; ~4-5M instructions per second at rest, a few % of a leg), so a run on a much
busier machine counts slightly more.

GC thresholds change the figures a lot: with Python's default (700) the cyclic collector runs
every few hundred allocations and costs the source connector ~40% of its instructions. The
default here is ``gc.set_threshold(50000, 20, 20)``, what ``sluice up`` / ``sluice connect``
set at start (sluice/node.py); ``--gc-threshold 0`` keeps Python's default.

Run time: valgrind runs Python ~50x slower; one process takes ~45 s of start-up plus ~0.8 s
per 1,000 lines (more for a revision that costs more), so the defaults (2 revisions x 2 line
counts x 2 repeats = 8 processes, one at a time) take ~12 min, ``--lines 10000,30000
--repeats 1`` ~4.5 min. Progress goes to stderr (a bar on a terminal), the table to stdout.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import CpuMeter, machine_summary
from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

REPO = Path(__file__).resolve().parent.parent
DRIVER = Path(__file__).resolve().parent / "_instructions_driver.py"
LEGS = {
    "leg1": "hub leg 1: file source connector",
    "leg2": "hub leg 2: file sink connector",
    "e2e": "hub end to end (both connectors)",
}
STEPS_PER_RUN = 1 + len(LEGS)  # start-up, then each leg

# Callgrind client requests for ctypes (no-ops outside valgrind). Python code cannot issue
# them itself, and callgrind's --dump-before/--toggle-collect name C functions, not the
# Python functions of a leg, so this is compiled at run time against valgrind's headers.
CGREQ_C = """\
#include <valgrind/callgrind.h>
#include <valgrind/valgrind.h>
void cg_dump(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
int cg_running(void) { return RUNNING_ON_VALGRIND; }
"""


@dataclass
class Version:
    label: str  # "before" / "after"
    describe: str  # what the table's header says about it
    checkout: Path
    worktree: bool  # made by this script (removed at the end)
    ir: dict[tuple[str, int, int], int] = field(default_factory=dict)  # (leg, lines, rep) -> Ir


def git(*args: str, cwd: Path = REPO) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"error: git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def commit_of(rev: str) -> tuple[str, str]:
    """(full sha, "short-sha subject") of a revision."""
    done = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"error: {rev!r} is not a commit of {REPO}")
    sha = done.stdout.strip()
    return sha, short(git("log", "-1", "--format=%h %s", sha))


def short(text: str, width: int = 100) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def find_compiler() -> str:
    """The C compiler for the shim, after checking valgrind is there (one line if not)."""
    if shutil.which("valgrind") is None:
        raise SystemExit("error: valgrind not found; Debian's `valgrind` package installs it")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("error: no C compiler (cc); Debian's `gcc` package installs one")
    return cc


def compile_shim(cc: str, tmp: Path) -> Path:
    """The client-request shim, compiled against valgrind's headers into ``tmp``."""
    source, lib = tmp / "cgreq.c", tmp / "libcgreq.so"
    source.write_text(CGREQ_C)
    done = subprocess.run(
        [cc, "-O2", "-shared", "-fPIC", "-o", str(lib), str(source)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        if "callgrind.h" in done.stderr or "valgrind.h" in done.stderr:
            raise SystemExit(
                "error: valgrind/callgrind.h not found; Debian's `valgrind` package installs it"
            )
        raise SystemExit(f"error: compiling the callgrind shim: {done.stderr.strip()}")
    return lib


def read_dumps(prefix: Path) -> dict[str, int]:
    """Instructions per leg from one run's dump files (``summary:`` of each leg's dump)."""
    found: dict[str, int] = {}
    for path in prefix.parent.glob(prefix.name + ".cg.*"):
        trigger = total = None
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("desc: Trigger:"):
                    m = re.search(r"Client Request: (\S+)", line)
                    trigger = m.group(1) if m else None
                elif line.startswith(("summary:", "totals:")):
                    total = int(line.split()[1])
                    break
        if trigger in LEGS and total is not None:
            found[trigger] = total
    return found


def tail(path: Path, n: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


class Runner:
    """Runs the driver under callgrind, one process at a time; stops them on the way out."""

    def __init__(self, lib: Path, tmp: Path, gc_threshold: int, advance: Any) -> None:
        self.lib, self.tmp, self.gc_threshold, self.advance = lib, tmp, gc_threshold, advance
        self.proc: subprocess.Popen[str] | None = None
        (tmp / "cg").mkdir()

    def run(self, version: Version, lines: int, rep: int) -> None:
        name = f"{version.label}-{lines}-r{rep}"
        prefix = self.tmp / "cg" / name
        log = prefix.with_suffix(".log")
        cmd = [
            "valgrind", "--tool=callgrind", "--trace-children=no",
            f"--callgrind-out-file={prefix}.cg.%p", f"--log-file={prefix}.valgrind.log",
            sys.executable, str(DRIVER), "--checkout", str(version.checkout),
            "--lines", str(lines), "--cgreq", str(self.lib),
            "--gc-threshold", str(self.gc_threshold), "--tmp", str(self.tmp),
        ]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(version.checkout)}
        with open(log, "w") as err:
            # its own process group: the broker child goes with it if this run is stopped
            self.proc = subprocess.Popen(
                cmd, cwd=version.checkout, env=env, stdout=subprocess.PIPE, stderr=err,
                text=True, start_new_session=True,
            )  # fmt: skip
            assert self.proc.stdout is not None
            what = f"{version.label} {lines:,} lines"
            self.advance(0, f"{what}, r{rep}: start-up")
            for line in self.proc.stdout:
                if line.startswith("STEP "):
                    done = line.split()[1]
                    nxt = {"ready": "leg1", "leg1": "leg2", "leg2": "e2e"}.get(done)
                    self.advance(1, f"{what}, r{rep}: {LEGS[nxt]}" if nxt else None)
            rc = self.proc.wait()
            self.proc = None
        found = read_dumps(prefix)
        if rc != 0 or set(found) != set(LEGS):
            raise SystemExit(
                f"error: {name} failed (exit {rc}, legs dumped: {sorted(found) or 'none'})\n"
                f"--- driver ---\n{tail(log)}\n--- valgrind ---\n"
                f"{tail(Path(f'{prefix}.valgrind.log'), 8)}"
            )
        for leg, ir in found.items():
            version.ir[(leg, lines, rep)] = ir

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        for sig, wait_s in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(wait_s)
                return
            except subprocess.TimeoutExpired:
                continue


def slope(points: list[tuple[int, int]]) -> float:
    """Least-squares instructions per line (two points: the difference quotient)."""
    xs = [float(x) for x, _ in points]
    ys = [float(y) for _, y in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def per_line(version: Version, leg: str, counts: list[int], repeats: int) -> list[float]:
    """One instr/line per repeat (repeat r's line counts paired with each other)."""
    return [
        slope([(n, version.ir[(leg, n, rep)]) for n in counts]) for rep in range(1, repeats + 1)
    ]


def spread(values: list[float]) -> str:
    if len(values) < 2:
        return "-"
    return f"{(max(values) - min(values)) / statistics.fmean(values):.1%}"


def make_worktree(tmp: Path, label: str, rev: str) -> Version:
    sha, describe = commit_of(rev)
    path = tmp / label
    git("worktree", "add", "--detach", "--quiet", str(path), sha)
    return Version(label, describe, path, worktree=True)


def this_tree(label: str) -> Version:
    head = short(git("log", "-1", "--format=%h %s"))
    dirty = git("status", "--porcelain", "--untracked-files=no")
    describe = f"working tree {REPO}: {head}" + (" + uncommitted changes" if dirty else "")
    return Version(label, describe, REPO, worktree=False)


def parse_counts(text: str) -> list[int]:
    try:
        counts = sorted({int(x.replace("_", "")) for x in text.split(",") if x.strip()})
    except ValueError:
        raise SystemExit(f"error: --lines {text!r}: comma-separated integers") from None
    if len(counts) < 2 or counts[0] <= 0:
        raise SystemExit("error: --lines needs two or more different positive line counts")
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="See the module docstring and bench/README.md for what is measured.",
    )
    ap.add_argument("--before", required=True, help="git revision A (e.g. a commit, main~1)")
    ap.add_argument(
        "--after",
        default=None,
        help="git revision B (default: this working tree, uncommitted changes included)",
    )
    ap.add_argument(
        "--lines",
        default="20000,80000",
        help="line counts; instr/line is the slope between them (default 20000,80000)",
    )
    ap.add_argument("--repeats", type=int, default=2, help="runs per (revision, line count)")
    ap.add_argument(
        "--gc-threshold",
        type=int,
        default=50_000,
        help="gc.set_threshold(N, 20, 20) in the hub process, as `sluice up` does "
        "(default 50000; 0 keeps Python's 700)",
    )
    ap.add_argument(
        "--limit",
        type=float,
        default=5.0,
        help="flag legs whose after/before is above 1 + LIMIT%% (default 5)",
    )
    ap.add_argument("--keep-dumps", type=Path, default=None, help="copy the callgrind dumps here")
    ap.add_argument(
        "--progress", action="store_true", help="draw the progress bar even when not a terminal"
    )
    args = ap.parse_args()
    counts = parse_counts(args.lines)
    if args.repeats < 1:
        raise SystemExit("error: --repeats must be at least 1")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up as on Ctrl-C

    # whole rows when stdout is a file or a pipe
    out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
    err = Console(stderr=True, highlight=False)
    cc = find_compiler()
    started, load0 = time.monotonic(), os.getloadavg()[0]
    meter = CpuMeter()
    tmp = Path(tempfile.mkdtemp(prefix="sluice-instructions-ab-"))
    versions: list[Version] = []
    runner: Runner | None = None
    try:
        lib = compile_shim(cc, tmp)
        versions.append(make_worktree(tmp, "before", args.before))
        versions.append(
            this_tree("after") if args.after is None else make_worktree(tmp, "after", args.after)
        )
        runs = [
            (version, n, rep)
            for rep in range(1, args.repeats + 1)
            for n in counts
            for version in versions
        ]
        show_bar = args.progress or err.is_terminal
        bar = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            console=err if err.is_terminal else Console(stderr=True, force_terminal=True),
            transient=True,
            disable=not show_bar,
        )
        task = bar.add_task("callgrind runs", total=len(runs) * STEPS_PER_RUN)

        def advance(steps: int, description: str | None) -> None:
            if description is None:
                bar.update(task, advance=steps)
            else:
                bar.update(task, advance=steps, description=description)

        runner = Runner(lib, tmp, args.gc_threshold, advance)
        with bar:
            for i, (version, n, rep) in enumerate(runs, 1):
                t0 = time.monotonic()
                runner.run(version, n, rep)
                if not show_bar:
                    err.print(
                        f"run {i}/{len(runs)}: {version.label} {n:,} lines r{rep} "
                        f"({time.monotonic() - t0:.0f} s)"
                    )
        if args.keep_dumps is not None:
            args.keep_dumps.mkdir(parents=True, exist_ok=True)
            for path in (tmp / "cg").iterdir():
                shutil.copy2(path, args.keep_dumps / path.name)
    except KeyboardInterrupt:
        raise SystemExit("interrupted; worktrees and temp files removed") from None
    finally:
        if runner is not None:
            runner.stop()
        for version in versions:
            if version.worktree:
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(version.checkout)],
                    cwd=REPO,
                    capture_output=True,
                )
        shutil.rmtree(tmp, ignore_errors=True)
        if any(version.worktree for version in versions):
            subprocess.run(["git", "worktree", "prune"], cwd=REPO, capture_output=True)

    before, after = versions
    elapsed = time.monotonic() - started
    busy = meter.foreign_cores()
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True)
    out.print(
        f"Instructions per line, file pipeline hub rows (callgrind) — "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, run time {elapsed / 60:.1f} min"
    )
    out.print(f"before: {before.describe}")
    out.print(f"after:  {after.describe}")
    out.print(
        f"lines {' and '.join(f'{n:,}' for n in counts)} x 100 B (instr/line = slope of each "
        f"leg's count over them), {args.repeats} repeat(s), gc threshold "
        f"{args.gc_threshold or 'Python default (700)'}, {valgrind.stdout.strip()}; "
        f"the broker process is not counted"
    )
    out.print(
        f"Machine: {machine_summary(tempfile.gettempdir())}; load avg at start {load0:.2f}"
        + (f"; other processes busy {busy:.2f} cores on average" if busy is not None else "")
    )
    table = Table()
    table.add_column("leg")
    for col in (
        "before instr/line",
        "after instr/line",
        "after/before",
        "spread between repeats (before / after)",
    ):
        table.add_column(col, justify="right")
    flagged = []
    for leg, title in LEGS.items():
        b = per_line(before, leg, counts, args.repeats)
        a = per_line(after, leg, counts, args.repeats)
        ratio = statistics.fmean(a) / statistics.fmean(b)
        over = ratio > 1 + args.limit / 100
        if over:
            flagged.append(f"{title} ({ratio - 1:+.1%})")
        table.add_row(
            title,
            f"{statistics.fmean(b):,.0f}",
            f"{statistics.fmean(a):,.0f}",
            f"[red]{ratio:.3f}[/red]" if over else f"{ratio:.3f}",
            f"{spread(b)} / {spread(a)}",
        )
    out.print(table)
    if flagged:
        out.print(f"More than {args.limit:g}% more instructions per line: {'; '.join(flagged)}")
    else:
        out.print(f"No leg above {args.limit:g}% more instructions per line.")


if __name__ == "__main__":
    main()
