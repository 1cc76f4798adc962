"""FileSourceTask: tails many files from one thread, one record per line or multiline event.

Why one thread and polling: a log agent follows hundreds of files; a thread (or inotify watch)
per file buys little when every ``poll`` already has to ``stat`` each path to notice rotation.
Each poll visits the open files round-robin (the first file visited rotates, so a busy file
cannot starve the others), reads what is new in 1 MiB chunks and stops at ``batch.size``
records. Globs are expanded again every ``glob.rescan.interval.ms``; closed or missing paths
are looked for only then. When nothing is new, ``poll`` waits ``poll.interval.ms`` (woken
early by ``stop``), as Kafka Connect's FileStreamSourceTask does.

A poll's lines come back as one ``SourceRecordBatch`` (``_records``): the raw line bytes, the
shared headers once, the offset's varying parts as columns. The worker produces it without a
record object per line and materialises records only where it needs them (transforms, hooks,
other converters). A poll that emitted anything else (several files, a rotation, multiline
events, an unterminated last line) returns plain records in order instead.

Offsets: the source partition is ``{"filename": path}``, the offset the byte position after
the event plus the file's identity (see ``_tailer``). The worker commits an offset only once
the broker acknowledged its record, so a restart resumes after the last acknowledged event:
nothing is lost; events read but unacknowledged at a crash are read again.

Files present at the first start without a committed offset are read from ``read.from``;
files that appear later are new and read from their beginning.

Tests inject ``clock`` and ``wait`` to drive timeouts without sleeping.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from connectors.file._discovery import expand
from connectors.file._records import Emitted
from connectors.file._tailer import FileOptions, TailedFile
from connectors.file.config import FileSourceConfig
from hub.api import SourceRecord, SourceRecordBatch, SourceTask, SourceTaskContext

log = logging.getLogger(__name__)


class FileSourceTask(SourceTask):
    def __init__(
        self,
        context: SourceTaskContext,
        *,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[float], object] | None = None,
    ) -> None:
        super().__init__(context)
        self._clock = clock
        self._stopping = threading.Event()
        self._wait = wait or self._stopping.wait
        self._lock = threading.Lock()  # poll vs stop: stop closes fds only between polls
        self._files: dict[str, TailedFile] = {}
        self._order: list[TailedFile] = []
        self._next_rescan = 0.0
        self._round = 0

    def start(self, config: Mapping[str, Any]) -> None:
        self.config = FileSourceConfig.parse(config)
        c = self.config
        self._name = f"{config.get('name', 'file-source')}-{c.task_index}"
        self._options = FileOptions(
            topic=c.topic,
            encoding=c.encoding,
            host=socket.gethostname() if c.include_host_header else None,
            multiline_pattern=c.multiline_pattern,
            multiline_timeout_s=c.multiline_timeout_ms / 1000,
            task=self._name,
            sequence_headers=c.include_sequence_headers,
        )
        paths = expand(c.patterns, c.task_index, c.task_count)
        self._adopt(paths, from_end=c.read_from == "end")
        self._next_rescan = self._clock() + c.glob_rescan_interval_ms / 1000
        log.info("[%s] started: %d file(s) from %s", self._name, len(paths), c.patterns)

    def _adopt(self, paths: list[str], from_end: bool) -> None:
        """Starts following ``paths`` (new to this task), resuming from committed offsets."""
        new = [p for p in paths if p not in self._files]
        if not new:
            return
        offsets = self.context.offset_reader.offsets([{"filename": p} for p in new])
        for path in new:
            tailed = TailedFile(path, self._options)
            tailed.start(offsets.get((("filename", path),)), from_end)
            self._files[path] = tailed
            self._order.append(tailed)

    def poll(self) -> SourceRecordBatch | list[SourceRecord] | None:
        with self._lock:
            if self._stopping.is_set():
                return None
            now = self._clock()
            rescan = now >= self._next_rescan
            if rescan:
                c = self.config
                self._adopt(expand(c.patterns, c.task_index, c.task_count), from_end=False)
                self._next_rescan = now + c.glob_rescan_interval_ms / 1000
            out = Emitted()
            limit = self.config.batch_size
            n = len(self._order)
            for k in range(n):
                if len(out) >= limit:
                    break
                self._order[(self._round + k) % n].poll(out, limit, now, rescan)
            self._round = (self._round + 1) % max(1, n)
        if not out:
            self._wait(self.config.poll_interval_ms / 1000)
            return None
        return out.result()

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            for tailed in self._order:
                tailed.close()
        log.info("[%s] stopped", getattr(self, "_name", "file-source"))

    def metrics(self) -> Mapping[str, float]:
        """How far behind the files this task is: bytes written but not read yet, summed
        over its files (rotated successors included), and how many files it follows."""
        with self._lock:  # between polls: no fd closes under the fstat
            behind = sum(tailed.bytes_behind() for tailed in self._order)
            return {"bytes_behind": float(behind), "files": float(len(self._order))}

    @property
    def files(self) -> list[str]:
        """Paths this task follows (for tests and status)."""
        return list(self._files)
