"""The ``sluice`` admin and console tools, run as a user runs them, against a real broker."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.fixtures.broker import BrokerProcess


def sluice(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "sluice", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, COLUMNS="200"),
    )
    if check and result.returncode != 0:
        raise AssertionError(f"sluice {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def _lag_rows(described: str, topic: str) -> list[list[str]]:
    """The per-partition rows (topic, partition, committed, end, lag, member) of one topic."""
    return [row for row in (line.split() for line in described.splitlines()) if row[:1] == [topic]]


def test_topic_lifecycle(broker: BrokerProcess, topic_name: str) -> None:
    b = ("--bootstrap", broker.bootstrap)
    sluice("topics", "create", topic_name, "--partitions", "3", "-c", "retention.ms=3600000", *b)
    assert topic_name in sluice("topics", "list", *b).stdout

    described = sluice("topics", "describe", topic_name, *b).stdout
    assert "partitions=3" in described
    assert "retention.ms" in described and "3600000" in described

    sluice("topics", "alter", topic_name, "-c", "cleanup.policy=compact", "--partitions", "4", *b)
    described = sluice("topics", "describe", topic_name, *b).stdout
    assert "partitions=4" in described and "compact" in described

    again = sluice("topics", "create", topic_name, *b, check=False)
    assert again.returncode == 1 and "already exists" in again.stderr.lower()

    sluice("topics", "delete", topic_name, "--yes", *b)
    assert topic_name not in sluice("topics", "list", *b).stdout


def test_produce_then_consume_to_the_end(broker: BrokerProcess, topic_name: str) -> None:
    b = ("--bootstrap", broker.bootstrap)
    sluice("topics", "create", topic_name, "--partitions", "1", *b)
    lines = [f"k{i}:value {i}" for i in range(50)]
    produced = sluice(
        "produce", topic_name, "-K", ":", "-H", "source=cli", *b, stdin="\n".join(lines)
    )
    assert "produced 50" in produced.stderr

    plain = sluice("consume", topic_name, "--print-key", *b).stdout.splitlines()
    assert plain == [line.replace(":", "\t", 1) for line in lines]

    records = [
        json.loads(x)
        for x in sluice("consume", topic_name, "--format", "json", *b).stdout.splitlines()
    ]
    assert [r["offset"] for r in records] == list(range(50))
    assert records[7]["key"] == "k7" and records[7]["value"] == "value 7"
    assert records[0]["headers"] == {"source": "cli"}

    from_offset = sluice("consume", topic_name, "--from", "45", *b).stdout.splitlines()
    assert from_offset == [f"value {i}" for i in range(45, 50)]
    assert sluice("consume", topic_name, "--from", "end", *b).stdout == ""


def test_group_consume_lag_and_reset(broker: BrokerProcess, topic_name: str) -> None:
    b = ("--bootstrap", broker.bootstrap)
    group = f"{topic_name}-g"
    sluice("topics", "create", topic_name, "--partitions", "2", *b)
    sluice("produce", topic_name, *b, stdin="\n".join(f"m{i}" for i in range(20)))

    got = sluice("consume", topic_name, "--group", group, "-n", "20", *b).stdout.splitlines()
    assert sorted(got) == sorted(f"m{i}" for i in range(20))

    described = sluice("groups", "describe", group, *b).stdout
    rows = _lag_rows(described, topic_name)
    assert len(rows) == 2 and all(row[4] == "0" for row in rows), described  # lag 0
    assert sum(int(row[2]) for row in rows) == 20  # committed offsets add up to everything
    assert group in sluice("groups", "list", *b).stdout

    dry = sluice("groups", "reset-offsets", group, "-t", topic_name, "--to", "beginning", *b)
    assert "dry run" in dry.stdout
    sluice("groups", "reset-offsets", group, "-t", topic_name, "--to", "beginning", "--execute", *b)
    rows = _lag_rows(sluice("groups", "describe", group, *b).stdout, topic_name)
    assert all(row[2] == "0" for row in rows) and sum(int(row[4]) for row in rows) == 20

    again = sluice("consume", topic_name, "--group", group, "-n", "20", *b).stdout.splitlines()
    assert len(again) == 20


def test_follow_commits_nothing(broker: BrokerProcess, topic_name: str) -> None:
    b = ("--bootstrap", broker.bootstrap)
    sluice("produce", topic_name, *b, stdin="a\nb\nc")
    out = sluice("consume", topic_name, "--follow", "-n", "3", *b).stdout.splitlines()
    assert out == ["a", "b", "c"]
    assert "sluice-console" not in sluice("groups", "list", *b).stdout


@pytest.mark.parametrize(
    "args",
    [
        ("topics", "list"),
        ("consume", "anything"),
    ],
)
def test_unreachable_broker_says_what_to_do(args: tuple[str, ...]) -> None:
    result = sluice(*args, "--bootstrap", "127.0.0.1:1", check=False)
    assert result.returncode == 1
    assert "error:" in result.stderr
