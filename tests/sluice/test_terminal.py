"""``sluice.terminal``: the one table style, literal error lines, progress only on stderr."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import typer

from sluice import terminal


def test_table_style_is_plain_and_upper_case(capsys: pytest.CaptureFixture[str]) -> None:
    rows = terminal.table("topic", "partitions")
    rows.add_row(terminal.escape("orders[x]"), "3")  # cells are markup: callers escape
    terminal.out.print(rows)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split() for line in lines] == [["TOPIC", "PARTITIONS"], ["orders[x]", "3"]]
    assert not any(ch in "".join(lines) for ch in "│┃━─")  # no borders


def test_fail_prints_literal_lines_and_exits(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as caught:
        terminal.fail(
            "needs [spark] " + "x" * 150,
            "pip install 'sluice[spark]'",
            details={"a.key": ["bad [value]"]},
            code=2,
        )
    assert caught.value.exit_code == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [  # markup-looking text printed as given; long lines not wrapped
        "error: needs [spark] " + "x" * 150,
        "  a.key: bad [value]",
        "hint: pip install 'sluice[spark]'",
    ]


def test_progress_draws_on_stderr_only_after_the_delay(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with terminal.progress("quick", total=10, unit="messages") as bar:
        for _ in range(10):
            bar.advance()
    assert bar.completed == 10 and bar.items == 10 and not bar.enabled  # stderr is no terminal
    assert capsys.readouterr() == ("", "")

    monkeypatch.setattr(terminal, "PROGRESS_DELAY_S", 0.0)
    monkeypatch.setattr(terminal.Tracker, "_REDRAW_S", 0.0)
    with terminal.progress("produce to t", total=1000, force=True, unit="messages") as bar:
        bar.advance(600, items=3, description="produce to t: 3 lines")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "produce to t: 3 lines" in captured.err and "3 messages" in captured.err


def test_progress_beside_output_stays_off_when_stdout_is_the_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(terminal, "err", SimpleNamespace(is_terminal=True))
    monkeypatch.setattr(terminal, "out", SimpleNamespace(is_terminal=True))
    with terminal.progress("consume", beside_output=True) as bar:
        shown_on_shared_terminal = bar.enabled
    monkeypatch.setattr(terminal, "out", SimpleNamespace(is_terminal=False))
    with terminal.progress("consume", beside_output=True) as bar:
        shown_with_stdout_piped = bar.enabled
    assert (shown_on_shared_terminal, shown_with_stdout_piped) == (False, True)
