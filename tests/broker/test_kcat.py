"""kcat (librdkafka's command-line client, the Debian package) against the broker."""

from __future__ import annotations

import shutil
import subprocess

import pytest

KCAT = shutil.which("kcat") or shutil.which("kafkacat")
pytestmark = pytest.mark.skipif(KCAT is None, reason="kcat is not installed")
TIMEOUT = 30


def _kcat(broker, *args: str, stdin: str | None = None) -> str:
    result = subprocess.run(
        [KCAT, "-b", broker.bootstrap, *args],  # type: ignore[list-item]
        input=stdin, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_metadata_lists_the_broker(broker):
    out = _kcat(broker, "-L", "-J")
    assert f'"name":"{broker.host}:{broker.port}"' in out.replace(" ", "")


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_produce_and_consume(broker, topic_name, codec):
    lines = [f"key{i % 3}:value-{i}" for i in range(100)]
    _kcat(broker, "-P", "-t", topic_name, "-K:", "-z", codec, stdin="\n".join(lines) + "\n")
    out = _kcat(
        broker, "-C", "-t", topic_name, "-o", "beginning", "-e", "-q",
        "-f", "%p|%o|%k|%s\n",
    )  # fmt: skip
    rows = [line.split("|") for line in out.splitlines()]
    assert [r[3] for r in rows] == [f"value-{i}" for i in range(100)]
    assert [int(r[1]) for r in rows] == list(range(100))
    assert [r[2] for r in rows] == [f"key{i % 3}" for i in range(100)]


def test_idempotent_producer_and_large_message(broker, topic_name):
    big = "L" * 900_000
    _kcat(
        broker, "-P", "-t", topic_name, "-X", "enable.idempotence=true",
        "-X", "message.max.bytes=2000000", stdin=f"small\n{big}\nlast\n",
    )  # fmt: skip
    out = _kcat(broker, "-C", "-t", topic_name, "-o", "beginning", "-e", "-q", "-f", "%o %S\n")
    assert out.splitlines() == ["0 5", "1 900000", "2 4"]


def test_headers_and_offsets(broker, topic_name):
    for i in range(5):
        _kcat(broker, "-P", "-t", topic_name, "-H", f"n={i}", stdin=f"m{i}\n")
    out = _kcat(broker, "-C", "-t", topic_name, "-o", "3", "-e", "-q", "-f", "%o %h %s\n")
    assert out.splitlines() == ["3 n=3 m3", "4 n=4 m4"]
    out = _kcat(broker, "-Q", "-t", f"{topic_name}:0:-1")  # ListOffsets: latest
    assert f"{topic_name} [0] offset 5" in out
