"""Property test of FileSourceTask against a model: random appends, partial writes,
rename rotations, copytruncates, polls with small batches and crash-restarts that resume
from the last acknowledged record. Whatever the interleaving, the events emitted — after
dropping re-sends by (file.stream, file.seq), as the file sink does — equal the lines written.

Rules the scenario respects (documented limits of a polling tailer, not bugs): a file is seen
by at least one poll before it is rotated away; copytruncate happens when the reader has caught
up (unread lines would exist only in the copy); rotated files are found again after a crash
through the committed offset (its inode and the files pinned after it), so a crash happens
with at most one rotation after the last acknowledged record, and none before the first.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from tests.connectors.file.conftest import Clock, OffsetStore, Source

OPS = st.lists(
    st.tuples(
        st.sampled_from(["lines", "partial", "poll", "rotate", "copytruncate", "crash"]),
        st.integers(min_value=1, max_value=40),
    ),
    min_size=1,
    max_size=40,
)


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,  # the same cases on every run; widen locally with --hypothesis-seed
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ops=OPS)
def test_emitted_events_equal_written_lines(tmp_path_factory, ops) -> None:
    note(repr(ops))
    tmp: Path = tmp_path_factory.mktemp("model")
    log = tmp / "app.log"
    log.touch()
    config = {"name": "model", "file": str(log), "topic": "t", "batch.size": "7",
              "glob.rescan.interval.ms": "0", "poll.interval.ms": "0"}  # fmt: skip
    src = Source(OffsetStore(), Clock(), config)
    written: list[str] = []
    partial = ""
    emitted: dict[tuple[str, int], str] = {}  # (stream, seq) -> value, first one kept
    rotations = 0
    acked_at: int | None = None  # rotations done when the last acknowledged record was read
    polled_since_rotation = True
    n = 0

    def take(records, ack_upto=None) -> None:
        nonlocal acked_at
        for r in records:
            emitted.setdefault((r.header("file.stream").value, r.header("file.seq").value), r.value)
        acked = records if ack_upto is None else records[:ack_upto]
        src.store.ack(acked)
        if acked:
            acked_at = rotations

    def drain() -> None:
        take(src.drain(ack=False))

    for op, k in ops:
        if op == "lines":
            lines = [f"{partial}L{n + i}" if i == 0 else f"L{n + i}" for i in range(k)]
            n += k
            with open(log, "a") as f:
                f.write(lines[0][len(partial) :] + "\n" + "".join(x + "\n" for x in lines[1:]))
            written += lines
            partial = ""
        elif op == "partial":
            with open(log, "a") as f:
                f.write(f"p{k}")
            partial += f"p{k}"
        elif op == "poll":
            take(src.poll(ack=False))
            polled_since_rotation = True
        elif op == "rotate":
            if not polled_since_rotation:
                take(src.poll(ack=False))
            os.rename(log, tmp / f"app.log.{rotations}")
            if partial:  # the old file ends without a newline: emitted once it is finished
                written.append(partial)
                partial = ""
            log.touch()
            rotations += 1
            polled_since_rotation = False
        elif op == "copytruncate":
            drain()
            if partial:
                continue  # the reader holds a partial line: truncating would cut it
            (tmp / f"copy.{n}.{len(written)}.{rotations}").write_bytes(log.read_bytes())
            os.truncate(log, 0)
        elif op == "crash":
            if rotations - (acked_at if acked_at is not None else 0) > 1 or (
                acked_at is None and rotations
            ):
                drain()  # rotated files are found again only through a committed offset
            records = src.poll(ack=False)
            take(records, ack_upto=k % (len(records) + 1))  # acked: a prefix
            src = src.restart()
    drain()
    assert list(emitted.values()) == written
    src.task.stop()
