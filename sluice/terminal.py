"""What every ``sluice`` command prints with: consoles, one table style, error lines, progress.

A leaf every CLI module may import (tests/hub/api/test_import_boundaries.py), so the admin
tools, ``sluice connectors``, ``sluice schemas`` and ``sluice pipelines`` look alike:

- ``out`` is standard output (data and tables), ``err`` standard error (messages, progress).
  Neither wraps long lines; tables are as wide as their content when stdout is not a terminal,
  so ``| grep`` and ``| awk`` see whole rows. Rich markup is for our own styling only: text a
  user or a server sent goes through ``escape`` (``fail``, ``error`` and ``success`` do it).
- ``table(...)``: Kafka's tools' style (``kafka-consumer-groups --describe``): upper-case
  headers, no borders, columns two spaces apart.
- ``fail(message, hint)``: ``error: ...`` (plus ``hint: ...``) on stderr, exit status 1
  (2 for usage errors); never a traceback.
- ``progress(...)``: a rich progress bar on stderr for work that runs longer than
  ``PROGRESS_DELAY_S``; off when stderr is not a terminal unless forced (``--progress``), so a
  pipe or a log file never fills with redraws. Nothing it draws goes to stdout.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

__all__ = [
    "PROGRESS_DELAY_S", "ProgressOpt", "Tracker", "err", "error", "escape", "fail", "out",
    "progress", "success", "table",
]  # fmt: skip

PROGRESS_DELAY_S = 1.0  # quicker work never shows a bar
PIPE_WIDTH = 500  # table width limit when stdout is not a terminal (rows stay on one line)


def _width(stream: object) -> int | None:
    """None (rich's own choice) on a terminal or with $COLUMNS; else room for whole rows."""
    isatty = getattr(stream, "isatty", None)
    if (isatty is not None and isatty()) or os.environ.get("COLUMNS"):
        return None
    return PIPE_WIDTH


out = Console(highlight=False, soft_wrap=True, width=_width(sys.stdout))
err = Console(stderr=True, highlight=False, soft_wrap=True, width=_width(sys.stderr))


def table(*columns: str, title: str | None = None) -> Table:
    """An empty table in the one style; add rows with ``add_row`` and ``out.print`` it."""
    return Table(
        *(column.upper() for column in columns),
        title=title,
        box=None,
        header_style="bold",
        pad_edge=False,
        padding=(0, 2, 0, 0),
    )


def error(message: str, hint: str | None = None) -> None:
    """``error: message`` and ``hint: ...`` on stderr; both are printed literally."""
    err.print(f"[red]error:[/red] {escape(message)}")
    if hint:
        err.print(f"[dim]hint:[/dim] {escape(hint)}")


def fail(
    message: str,
    hint: str | None = None,
    *,
    details: Mapping[str, Sequence[str]] | None = None,
    code: int = 1,
) -> NoReturn:
    """Prints the error, one ``  key: reason`` line per detail, the hint; exits ``code``."""
    error(message)
    for key, reasons in (details or {}).items():
        for reason in reasons:
            err.print(f"  [bold]{escape(key)}[/bold]: {escape(reason)}")
    if hint:
        err.print(f"[dim]hint:[/dim] {escape(hint)}")
    raise typer.Exit(code)


def success(message: str) -> None:
    """A confirmation line on stdout (``created topic x``); printed literally."""
    out.print(escape(message))


class Tracker:
    """One progress bar: ``advance`` it as work gets done; it appears after the delay.

    ``completed`` drives the bar (against ``total``: bytes of a file, messages wanted);
    ``items`` is the count shown beside it (messages, rows), the same unless told. Redraws at
    most every ``_REDRAW_S``, so a loop may call ``advance`` per message. Disabled, it only
    counts, so callers never branch on whether a bar shows. Not thread-safe.
    """

    _REDRAW_S = 0.1

    def __init__(self, description: str, total: float | None, enabled: bool, unit: str) -> None:
        self.description, self.total, self.enabled, self.unit = description, total, enabled, unit
        self.completed = 0.0
        self.items = 0
        self._began = self._drawn = time.monotonic()
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def advance(
        self, amount: float = 1, *, items: int | None = None, description: str | None = None
    ) -> None:
        self.completed += amount
        self.items += int(amount) if items is None else items
        if description is not None:
            self.description = description
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._drawn < self._REDRAW_S:
            return
        self._drawn = now
        if self._progress is None:
            if now - self._began < PROGRESS_DELAY_S:
                return
            self._start()
        self._draw()

    def set_total(self, total: float | None) -> None:
        self.total = total
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, total=total)

    def _draw(self) -> None:
        assert self._progress is not None and self._task is not None
        self._progress.update(
            self._task,
            completed=self.completed,
            description=escape(self.description),
            items=self.items,
        )

    def _start(self) -> None:
        console = err if err.is_terminal else Console(stderr=True, force_terminal=True)
        columns: list[ProgressColumn] = [SpinnerColumn(), TextColumn("{task.description}")]
        if self.total is not None:
            columns += [BarColumn(), TaskProgressColumn()]
        columns += [TextColumn(f"{{task.fields[items]:,}} {self.unit}"), TimeElapsedColumn()]
        if self.total is not None:
            columns.append(TimeRemainingColumn())
        # No stdout redirection: rich would route a command's data (sys.stdout) to stderr.
        self._progress = Progress(
            *columns, console=console, transient=True, redirect_stdout=False, redirect_stderr=False
        )
        self._progress.start()
        self._task = self._progress.add_task(
            escape(self.description),
            total=self.total,
            completed=int(self.completed),
            items=self.items,
        )

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


@contextmanager
def progress(
    description: str,
    *,
    total: float | None = None,
    force: bool = False,
    unit: str = "done",
    beside_output: bool = False,
) -> Iterator[Tracker]:
    """A ``Tracker`` drawn on stderr when it is a terminal (or ``force``), removed at the end.

    ``unit`` labels the count beside the bar (``messages``, ``rows``). ``beside_output``: the
    command prints data on stdout as it goes; a bar is then drawn only when stdout is not the
    same terminal (``| jq``, ``> file``), where the two would garble each other.
    """
    shown = err.is_terminal and not (beside_output and out.is_terminal)
    tracker = Tracker(description, total, enabled=force or shown, unit=unit)
    try:
        yield tracker
    finally:
        tracker.close()


ProgressOpt = typer.Option(
    False,
    "--progress",
    help="Show a progress bar on stderr even when it is not a terminal (default: only on one).",
)
