"""The ``sluice`` admin and console tools, run as a user runs them, against a real broker."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.fixtures.broker import BrokerProcess, wait_until


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

    deleted = sluice("groups", "delete", group, "--yes", *b)
    assert f"deleted group {group}" in deleted.stdout
    assert group not in sluice("groups", "list", *b).stdout
    missing = sluice("groups", "delete", group, "--yes", *b, check=False)
    assert missing.returncode == 1 and f"error: group {group} not found" in missing.stderr


def test_groups_delete_refuses_a_group_with_members(broker: BrokerProcess, topic_name: str) -> None:
    from confluent_kafka import Consumer

    b = ("--bootstrap", broker.bootstrap)
    group = f"{topic_name}-live"
    sluice("produce", topic_name, *b, stdin="x")
    member = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    member.subscribe([topic_name])
    try:
        wait_until(lambda: member.poll(0.2) is not None or member.assignment(), 30, "a member")
        busy = sluice("groups", "delete", group, "--yes", *b, check=False)
        assert busy.returncode == 1
        assert f"error: group {group} has active members" in busy.stderr
        assert "hint: stop its consumers first" in busy.stderr
    finally:
        member.close()


def test_describe_names_config_sources_as_kafka_does(
    broker: BrokerProcess, topic_name: str
) -> None:
    b = ("--bootstrap", broker.bootstrap)
    sluice("topics", "create", topic_name, "-c", "retention.ms=60000", *b)
    overrides = _config_rows(sluice("topics", "describe", topic_name, *b).stdout)
    assert overrides == {"retention.ms": ["60000", "DYNAMIC_TOPIC_CONFIG"]}
    every = _config_rows(sluice("topics", "describe", topic_name, "--all", *b).stdout)
    assert every["retention.ms"] == ["60000", "DYNAMIC_TOPIC_CONFIG"]
    assert every["cleanup.policy"] == ["delete", "DEFAULT_CONFIG"]
    assert len(every) > 10


def _config_rows(described: str) -> dict[str, list[str]]:
    """The config table's rows (after its CONFIG header) as key -> [value, source]."""
    lines = described.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["CONFIG"])
    return {row[0]: row[1:] for row in (line.split() for line in lines[start + 1 :]) if row}


def test_produce_file_and_consume_to_a_pipe_keep_stdout_for_data(
    broker: BrokerProcess, topic_name: str, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    b = ("--bootstrap", broker.bootstrap)
    lines = [f"line {i}" for i in range(2000)]
    source = tmp_path / "big.txt"
    source.write_text("".join(f"{line}\n" for line in lines))
    produced = sluice("produce", topic_name, "--file", str(source), "--progress", *b)
    assert produced.stdout == "" and "produced 2000 message(s)" in produced.stderr
    consumed = sluice("consume", topic_name, "-n", "2000", "--progress", *b)
    assert consumed.stdout.splitlines() == lines  # nothing but the data on stdout
    assert "consumed 2000 message(s)" in consumed.stderr
    unreadable = sluice("produce", topic_name, "--file", str(tmp_path / "nope"), *b, check=False)
    assert unreadable.returncode == 1 and "error: cannot read" in unreadable.stderr


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
