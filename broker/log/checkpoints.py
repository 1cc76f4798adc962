"""``replication-offset-checkpoint``: the high watermark of every partition in a data dir.

In cluster mode the high watermark is what the ISR has, not the log end, and a restarted
replica must not serve more than was committed before it stopped. The replica manager writes
this file every ``replica.high.watermark.checkpoint.interval.ms`` and on shutdown, and reads it
at start. Kafka's format, so the file reads the same as theirs::

    0                     format version
    2                     number of entries
    orders 0 1200         topic partition offset
    orders 1 977

Written atomically (temp file, fsync, rename); a crash leaves the previous complete file, whose
values are only lower than the truth (a high watermark never moves back), which is safe: the
replica then serves less until replication moves it on again.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from broker.log._atomic import write_atomically

HW_CHECKPOINT_FILE = "replication-offset-checkpoint"


def read_checkpoint(path: Path) -> dict[tuple[str, int], int]:
    """The saved offsets by (topic, partition); empty if the file is missing or unreadable."""
    try:
        lines = path.read_text().split("\n")
        count = int(lines[1])
        out: dict[tuple[str, int], int] = {}
        for line in lines[2 : 2 + count]:
            topic, partition, offset = line.rsplit(" ", 2)
            out[(topic, int(partition))] = int(offset)
        return out
    except (OSError, IndexError, ValueError):
        return {}


def write_checkpoint(path: Path, offsets: Mapping[tuple[str, int], int]) -> None:
    body = "".join(f"{t} {p} {o}\n" for (t, p), o in sorted(offsets.items()))
    write_atomically(path, f"0\n{len(offsets)}\n{body}".encode())
