"""Unit tests of FileSourceTask's reading logic, driving ``poll()`` directly with in-test
contexts (conftest.py): no worker, no broker, no sleeps."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from connectors.file.source_task import FileSourceTask


def write(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


def test_reads_lines_from_beginning_with_headers_and_offsets(tmp_path, source):
    log = tmp_path / "app.log"
    write(log, "one\ntwo\r\nthree\n")
    src = source(file=str(log))
    records = src.drain()
    assert [r.value for r in records] == ["one", "two", "three"]
    assert all(r.topic == "logs" and r.source_partition == {"filename": str(log)} for r in records)
    assert [r.source_offset["position"] for r in records] == [4, 9, 15]
    assert [r.header("file.offset").value for r in records] == [0, 4, 9]
    assert records[0].header("file.path").value == str(log)
    assert records[0].header("file.host").value == socket.gethostname()
    st = os.stat(log)
    assert records[-1].source_offset["inode"] == st.st_ino
    assert records[-1].source_offset["device"] == st.st_dev


def test_host_header_can_be_disabled(tmp_path, source):
    log = tmp_path / "a.log"
    write(log, "x\n")
    (record,) = source(file=str(log), include_host_header="false").drain()
    assert record.header("file.host") is None


def test_tails_appended_lines(tmp_path, source):
    log = tmp_path / "app.log"
    write(log, "a\n")
    src = source(file=str(log))
    assert src.values() == ["a"]
    assert src.poll() == []
    write(log, "b\nc\n")
    assert src.values() == ["b", "c"]


def test_read_from_end_skips_existing_lines(tmp_path, source):
    log = tmp_path / "app.log"
    write(log, "old1\nold2\nhalf")
    src = source(file=str(log), read_from="end")
    assert src.values() == []
    write(log, "-done\nnew\n")
    assert src.values() == ["half-done", "new"]  # never a fragment of a line


def test_partial_line_waits_for_its_newline(tmp_path, source):
    log = tmp_path / "app.log"
    write(log, "complete\npart")
    src = source(file=str(log))
    assert src.values() == ["complete"]
    write(log, "ial")
    assert src.values() == []
    write(log, " line\n")
    records = src.drain()
    assert [r.value for r in records] == ["partial line"]
    assert records[0].source_offset["position"] == os.path.getsize(log)


def test_batch_size_caps_each_poll(tmp_path, source):
    log = tmp_path / "app.log"
    write(log, "".join(f"{i}\n" for i in range(25)))
    src = source(file=str(log), batch_size="10")
    sizes = [len(src.poll()) for _ in range(4)]
    assert sizes == [10, 10, 5, 0]


def test_multiline_events_join_continuations(tmp_path, source, clock):
    log = tmp_path / "app.log"
    write(log, "cont-before\nERROR a\n  at x\n  at y\nINFO b\nWARN c\n  more\n")
    src = source(file=str(log), multiline_pattern=r"^[A-Z]+ ", multiline_timeout_ms="500")
    assert src.values() == ["cont-before", "ERROR a\n  at x\n  at y", "INFO b"]
    # "WARN c" may still get continuation lines: held until the timeout
    clock.advance(0.4)
    write(log, "  last\n")
    assert src.values() == []
    clock.advance(0.5)
    records = src.drain()
    assert [r.value for r in records] == ["WARN c\n  more\n  last"]
    assert records[0].source_offset["position"] == os.path.getsize(log)
    assert records[0].header("file.offset").value == len(
        "cont-before\nERROR a\n  at x\n  at y\nINFO b\n"
    )


def test_multiline_pending_event_is_reread_after_restart(tmp_path, source):
    log = tmp_path / "app.log"
    write(log, "E1\n cont\nE2\n c2\n")
    src = source(file=str(log), multiline_pattern="^E")
    assert src.values() == ["E1\n cont"]
    src = src.restart()
    write(log, "E3\n")
    assert src.values() == ["E2\n c2"]


def test_rename_rotation_and_copytruncate_lose_and_repeat_nothing(tmp_path, source):
    log = tmp_path / "app.log"
    log.touch()
    src = source(file=str(log), batch_size="7")
    written: list[str] = []
    emitted: list[str] = []
    n = 0
    for round_ in range(12):
        for _ in range(25):
            line = f"line-{n:05d}"
            write(log, line + "\n")
            written.append(line)
            n += 1
        emitted += [r.value for r in src.poll()]  # 7 lines emitted, the rest still pending
        if round_ % 3 == 0:  # copytruncate: copy, then truncate in place
            # lines not read before the truncate exist only in the copy (inherent to
            # copytruncate), so the agent catches up first, as it normally has
            emitted += src.values()
            (tmp_path / f"app.log.{round_}").write_bytes(log.read_bytes())
            os.truncate(log, 0)
            write(log, "after-truncate\n")
            written.append("after-truncate")
            emitted += [r.value for r in src.poll()]  # size < position: from 0
        else:  # rename + recreate; a few more lines still reach the old inode
            os.rename(log, tmp_path / f"app.log.{round_}")
            with open(tmp_path / f"app.log.{round_}", "a") as old:
                old.write(f"late-{round_}\n")
            written.append(f"late-{round_}")
            log.touch()
    emitted += src.values()
    assert emitted == written


def test_rotation_while_stopped_finishes_the_old_file(tmp_path, source):
    log = tmp_path / "app.log"
    write(log, "a\nb\n")
    src = source(file=str(log))
    assert src.values() == ["a", "b"]
    src.task.stop()
    write(log, "c\n")  # written before rotation, never read
    os.rename(log, tmp_path / "app.log.1")
    write(log, "d\n")
    src = src.restart()
    assert src.values() == ["c", "d"]


def test_truncation_and_rewrite_detected_by_fingerprint(tmp_path, source):
    log = tmp_path / "app.log"
    write(log, "first\nsecond\n")
    src = source(file=str(log))
    assert src.values() == ["first", "second"]
    with open(log, "w") as f:  # truncate and refill beyond the old size
        f.write("NEW-1 replaced\nNEW-2 replaced\n")
    assert src.values() == ["NEW-1 replaced", "NEW-2 replaced"]


def test_resume_after_restart_from_last_acknowledged_record(tmp_path, source):
    log = tmp_path / "app.log"
    write(log, "".join(f"{i}\n" for i in range(10)))
    src = source(file=str(log))
    records = src.poll(ack=False)
    src.store.ack(records[:4])  # the broker acknowledged only the first four
    src = src.restart()
    assert src.values() == [str(i) for i in range(4, 10)]


def test_resume_from_kafka_connect_style_offset(tmp_path, source):
    log = tmp_path / "test.txt"
    write(log, "a\nb\nc\n")
    src = source(file=str(log))
    src.task.stop()
    src.store.committed[(("filename", str(log)),)] = {"position": 2}  # FileStreamSource's
    assert src.restart().values() == ["b", "c"]


def test_offset_beyond_a_shorter_file_restarts_from_zero(tmp_path, source):
    log = tmp_path / "app.log"
    write(log, "x\n")
    src = source(file=str(log))
    src.store.committed[(("filename", str(log)),)] = {"position": 500}
    assert src.restart().values() == ["x"]


def test_glob_picks_up_new_files_from_their_beginning(tmp_path, source, clock):
    write(tmp_path / "a.log", "a1\n")
    src = source(file=str(tmp_path / "*.log"), read_from="end", glob_rescan_interval_ms="1000")
    assert src.values() == []
    write(tmp_path / "b.log", "b1\nb2\n")
    write(tmp_path / "a.log", "a2\n")
    assert src.values() == ["a2"]  # b.log not seen before the next rescan
    clock.advance(1.0)
    assert sorted(src.values()) == ["b1", "b2"]
    assert src.task.files == [str(tmp_path / "a.log"), str(tmp_path / "b.log")]


def test_files_list_and_comma_separated(tmp_path, source):
    for name in ("x.log", "y.txt", "z.dat"):
        write(tmp_path / name, name + "\n")
    src = source(files=f"{tmp_path}/*.log, {tmp_path}/y.txt")
    assert sorted(src.values()) == ["x.log", "y.txt"]


def test_many_files_in_one_task(tmp_path, source):
    for i in range(200):
        write(tmp_path / f"f{i:03d}.log", "".join(f"{i}-{j}\n" for j in range(5)))
    src = source(file=str(tmp_path / "*.log"), batch_size="100")
    values = src.values()
    assert sorted(values) == sorted(f"{i}-{j}" for i in range(200) for j in range(5))
    for i in range(200):  # each file's lines stay in order
        assert [v for v in values if v.startswith(f"{i}-")] == [f"{i}-{j}" for j in range(5)]
    for i in range(0, 200, 7):
        write(tmp_path / f"f{i:03d}.log", f"{i}-late\n")
    assert sorted(src.values()) == sorted(f"{i}-late" for i in range(0, 200, 7))


def test_file_disappears_and_reappears(tmp_path, source, clock):
    log = tmp_path / "app.log"
    write(log, "a\n")
    src = source(file=str(log))
    assert src.values() == ["a"]
    os.rename(log, tmp_path / "elsewhere")
    assert src.values() == []
    clock.advance(10)  # past the grace period: closed, remembered
    assert src.values() == []
    os.rename(tmp_path / "elsewhere", log)  # the same file comes back: continue
    write(log, "b\n")
    assert src.values() == ["b"]
    log.unlink()
    clock.advance(10)
    assert src.values() == []
    write(log, "new\n")  # a different file at the path: from its beginning
    assert src.values() == ["new"]


def test_missing_literal_file_is_waited_for(tmp_path, source):
    log = tmp_path / "later.log"
    src = source(file=str(log))
    assert src.values() == []
    write(log, "hello\n")
    assert src.values() == ["hello"]


def test_tasks_split_files_deterministically(tmp_path, source):
    for i in range(30):
        write(tmp_path / f"{i}.log", f"{i}\n")
    pattern = str(tmp_path / "*.log")
    seen: list[str] = []
    for index in range(3):
        src = source(file=pattern, task_index=str(index), task_count="3")
        files = src.task.files
        again = source(file=pattern, task_index=str(index), task_count="3").task.files
        assert files == again
        seen += src.values()
    assert sorted(seen, key=int) == [str(i) for i in range(30)]


def test_stop_closes_files_and_poll_returns_nothing(tmp_path, source):
    log = tmp_path / "app.log"
    write(log, "a\n")
    src = source(file=str(log))
    src.task.stop()
    assert src.task.poll() is None


def test_default_wait_is_woken_by_stop(tmp_path):
    from tests.connectors.file.conftest import OffsetStore, SourceContext

    log = tmp_path / "a.log"
    log.touch()
    cfg = {"file": str(log), "topic": "t", "poll.interval.ms": "60000"}
    task = FileSourceTask(SourceContext(OffsetStore(), cfg))
    task.start(cfg)
    task.stop()
    assert task.poll() is None  # returns at once, no minute-long wait


def test_unterminated_last_line_is_emitted_once_its_file_is_rotated_away(tmp_path, source):
    log = tmp_path / "app.log"
    write(log, "a\nno newline")
    src = source(file=str(log))
    assert src.values() == ["a"]
    os.rename(log, tmp_path / "app.log.1")
    write(log, "b\n")
    records = src.drain()
    assert [r.value for r in records] == ["no newline", "b"]
    assert records[0].source_offset["position"] == len("a\nno newline")
    assert records[1].source_offset["position"] == 2  # the new file, from 0


def test_overlong_line_is_split_instead_of_buffered_forever(tmp_path, source, monkeypatch):
    from connectors.file import _tailer

    monkeypatch.setattr(_tailer, "MAX_LINE_BYTES", 10)
    monkeypatch.setattr(_tailer, "CHUNK_BYTES", 8)
    log = tmp_path / "app.log"
    write(log, "x" * 30 + "\nshort\n")
    values = source(file=str(log)).values()
    assert "".join(values[:-1]) == "x" * 30 and values[-1] == "short"
    assert all(len(v) <= 16 for v in values)


def test_string_only_task_config_from_the_runtime(tmp_path, source):
    log = tmp_path / "a.log"
    write(log, "x\n")
    src = source(file=str(log), task_index="0", task_count="1", include_host_header="true")
    assert src.values() == ["x"]


def test_sequence_headers_continue_across_restart_so_resends_keep_their_numbers(tmp_path, source):
    log = tmp_path / "app.log"
    write(log, "a\nb\nc\n")
    src = source(file=str(log))
    first = src.poll(ack=False)
    assert [r.header("file.seq").value for r in first] == [1, 2, 3]
    stream = first[0].header("file.stream").value
    assert all(r.header("file.stream").value == stream for r in first)
    src.store.ack(first[:1])  # only "a" acknowledged before the crash
    again = src.restart().drain()
    assert [(r.value, r.header("file.seq").value) for r in again] == [("b", 2), ("c", 3)]
    assert again[0].header("file.stream").value == stream


def test_sequence_headers_can_be_disabled(tmp_path, source):
    log = tmp_path / "a.log"
    write(log, "x\n")
    (record,) = source(file=str(log), include_sequence_headers="false").drain()
    assert record.header("file.seq") is None and record.header("file.stream") is None
    assert record.source_offset["seq"] == 1


def test_pending_files_in_the_committed_offset_are_not_skipped(tmp_path, source):
    log = tmp_path / "app.log"
    write(log, "a1\na2\n")
    src = source(file=str(log), batch_size="1")
    src.poll()  # a1
    os.rename(log, tmp_path / "app.log.1")
    write(log, "b1\n")
    (a2,) = src.poll()  # acknowledged; its offset lists b as pending
    assert len(a2.source_offset["pending"]) == 1
    os.rename(log, tmp_path / "app.log.2")  # b rotated away before it was read
    write(log, "c1\n")
    src = src.restart()
    assert src.values() == ["b1", "c1"]


def test_crash_before_the_first_commit_rereads_under_the_same_stream(tmp_path, source):
    log = tmp_path / "app.log"
    write(log, "x\ny\n")
    src = source(file=str(log))
    first = src.drain(ack=False)
    again = src.restart().drain(ack=False)
    key = [(r.header("file.stream").value, r.header("file.seq").value, r.value) for r in first]
    assert key == [
        (r.header("file.stream").value, r.header("file.seq").value, r.value) for r in again
    ]
