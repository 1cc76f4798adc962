"""Every ``sluice`` command's help: each command and parameter described, no type noise.

The walk builds the real command tree (``sluice.cli.build``, every layer registered) and
renders each command's ``--help`` as a user sees it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from sluice.cli import build

TYPE_NOISE = re.compile(r"<(str|bool|int|float|path|int range|float range|list\[[^]]*\])>")


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


ROOT = build()
COMMANDS = list(_commands(ROOT))


@pytest.fixture
def show_help(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """``sluice PATH --help`` as printed on a 200-column terminal."""
    monkeypatch.setenv("COLUMNS", "200")

    def run(*path: str) -> str:
        status = ROOT.main([*path, "--help"], prog_name="sluice", standalone_mode=False)
        assert status in (0, None)
        return capsys.readouterr().out

    return run


def test_the_walk_sees_every_layer() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    expected = {
        "up", "connect", "broker", "produce", "consume", "topics describe", "groups delete",
        "connectors validate", "connectors plugins", "pipelines run", "schemas list",
    }  # fmt: skip
    assert expected <= names


@pytest.mark.parametrize("path", [path for path, _ in COMMANDS], ids=lambda p: " ".join(p) or "-")
def test_help_describes_everything_without_types(path: tuple[str, ...], show_help: Any) -> None:
    command = dict(COMMANDS)[path]
    assert (command.help or "").strip(), f"sluice {' '.join(path)} has no description"
    undescribed = [
        p.name
        for p in command.params
        if not getattr(p, "hidden", False) and not (getattr(p, "help", None) or "").strip()
    ]
    assert undescribed == [], f"sluice {' '.join(path)}: no help for {undescribed}"

    shown = show_help(*path)
    assert TYPE_NOISE.search(shown) is None, shown
    assert "Show this message and exit." in shown


def test_flags_show_no_value_and_options_a_value_name(show_help: Any) -> None:
    shown = show_help("consume")
    follow = next(line for line in shown.splitlines() if "--follow" in line)
    assert re.search(r"--follow\s+-f\s+Keep tailing", follow), follow
    partitions = next(line for line in shown.splitlines() if "--partition " in line)
    assert "INTEGER" in partitions
    assert "{TOPIC}" in shown  # the usage line names the argument
