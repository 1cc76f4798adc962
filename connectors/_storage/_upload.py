"""Background upload of committed batches, so encoding the next batch overlaps the upload.

One worker thread per task runs ``finish()`` (Parquet encoding releases the GIL in parts) and
``destination.write_batch``. Per Kafka partition at most one batch is in flight: the next commit
waits for it, so batches reach the store in offset order and only the newest one can ever be
partial — the property the destinations' recovery relies on.

A failed upload cannot be retried from memory (its buffers were handed over), so the partition
is *rewound*: its writer drops everything from the failed batch's start, asks the worker to seek
back there (``SinkTaskContext.offset``), ignores records until that offset arrives again, and
returns it from ``pre_commit`` meanwhile. The redelivered records rebuild the same batch under
the same names. Transient errors (RetriableError) surface to the worker for backoff; anything
else fails the task.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from connectors._storage.destinations import Batch, Destination
from connectors._storage.formats import FileBuffer

log = logging.getLogger(__name__)


@dataclass
class Job:
    topic: str
    partition: int
    start: int
    next_offset: int
    files: list[tuple[str, FileBuffer]]  # files[0] starts at ``start``


class Uploader:
    def __init__(self, destination: Destination, name: str, background: bool = True) -> None:
        self.destination = destination
        self.name = name
        self._pool = (
            ThreadPoolExecutor(1, thread_name_prefix=f"{name}-upload") if background else None
        )

    def _run(self, job: Job) -> None:
        batch = Batch(job.topic, job.partition, job.start, job.next_offset,
                      [(path, buffer.finish()) for path, buffer in job.files])  # fmt: skip
        self.destination.write_batch(batch)
        log.debug("[%s] %s-%d: uploaded [%d, %d) in %d files", self.name, job.topic,
                  job.partition, job.start, job.next_offset, len(job.files))  # fmt: skip

    def submit(self, job: Job) -> Future[None]:
        if self._pool is None:
            done: Future[None] = Future()
            try:
                self._run(job)
                done.set_result(None)
            except BaseException as exc:
                done.set_exception(exc)
            return done
        return self._pool.submit(self._run, job)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
