"""Idempotent-producer state of one partition: what makes producer retries exactly-once.

For each producer id the log remembers its epoch and the sequence numbers and offsets of its
last ``MAX_BATCHES`` (5, Kafka's ``max.in.flight.requests.per.connection`` limit) batches:

- a batch whose sequence range equals a remembered one is a *duplicate* (the producer retried
  after a lost response): the caller returns the original offsets and writes nothing;
- a lower epoch than the known one is a zombie producer: ``InvalidProducerEpochError``;
- a higher epoch must start at sequence 0; the same epoch must continue at last sequence + 1
  (wrapping at 2**31): otherwise ``OutOfOrderSequenceError`` (a batch was lost in between);
- an unknown producer id is accepted at any sequence, as Kafka does since KIP-360, because its
  state may have been dropped with old segments.

Persistence (design choice, Kafka's): a JSON snapshot ``producer-state.json`` tagged with the
log end offset it covers is written atomically (temp + fsync + rename) on segment roll and on
close. On open the snapshot is loaded if it is not ahead of the recovered log, and the batch
headers after it are replayed (``replay``); without a snapshot the whole log's headers are
replayed. Headers carry producer id, epoch and sequences, so no record is ever decoded.

Not thread-safe by itself: the PartitionLog lock guards it.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from broker.errors import InvalidProducerEpochError, OutOfOrderSequenceError
from broker.log._atomic import write_atomically
from broker.log.batch import HEADER_SIZE, BatchHeader, read_header
from broker.log.segment import Segment

MAX_BATCHES = 5
_SEQ_MOD = 2**31


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    max_timestamp: int


@dataclass
class ProducerEntry:
    epoch: int
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=MAX_BATCHES))

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1


def _is_idempotent(header: BatchHeader) -> bool:
    return header.producer_id >= 0 and header.base_sequence >= 0


class ProducerStateManager:
    """Sequence/epoch bookkeeping per producer id for one partition."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.producers: dict[int, ProducerEntry] = {}

    def check(self, headers: list[BatchHeader]) -> BatchMetadata | None:
        """Validates a request's batches in order; returns the cached metadata of a duplicate.

        Raises before anything is written. Batches of one producer within the request are
        checked against each other too (each must follow the previous).
        """
        expected: dict[int, tuple[int, int]] = {}  # pid -> (epoch, last seq) incl. this request
        for header in headers:
            if not _is_idempotent(header):
                continue
            pid, epoch = header.producer_id, header.producer_epoch
            entry = self.producers.get(pid)
            if pid in expected:
                known_epoch, last_seq = expected[pid]
            elif entry is not None:
                known_epoch, last_seq = entry.epoch, entry.last_seq
                if epoch == entry.epoch:
                    for meta in entry.batches:
                        if (
                            meta.first_seq == header.base_sequence
                            and meta.last_seq == header.last_sequence
                        ):
                            return meta
            else:
                expected[pid] = (epoch, header.last_sequence)
                continue
            if epoch < known_epoch:
                raise InvalidProducerEpochError(
                    f"producer {pid} epoch {epoch} is older than current epoch {known_epoch}"
                )
            if epoch > known_epoch:
                if header.base_sequence != 0:
                    raise OutOfOrderSequenceError(
                        f"producer {pid} new epoch {epoch} must start at sequence 0, "
                        f"got {header.base_sequence}"
                    )
            elif last_seq >= 0 and header.base_sequence != (last_seq + 1) % _SEQ_MOD:
                raise OutOfOrderSequenceError(
                    f"producer {pid} epoch {epoch}: expected sequence {(last_seq + 1) % _SEQ_MOD}, "
                    f"got {header.base_sequence}"
                )
            expected[pid] = (epoch, header.last_sequence)
        return None

    def update(self, header: BatchHeader, base_offset: int, max_timestamp: int) -> None:
        """Records an appended batch; ``base_offset``/``max_timestamp`` as written to the log."""
        if not _is_idempotent(header):
            return
        entry = self.producers.get(header.producer_id)
        if entry is None or header.producer_epoch != entry.epoch:
            entry = self.producers[header.producer_id] = ProducerEntry(header.producer_epoch)
        entry.batches.append(
            BatchMetadata(
                header.base_sequence,
                header.last_sequence,
                base_offset,
                base_offset + header.last_offset_delta,
                max_timestamp,
            )
        )

    def rebuild(self, segments: Sequence[Segment], log_end_offset: int) -> None:
        """Loads the snapshot, then replays batch headers after it (all of them without one)."""
        start = self.load(log_end_offset)
        for segment in segments:
            if start is not None and segment.next_offset <= start:
                continue
            for b in segment.scan():
                if start is None or b.base_offset >= start:
                    head = read_header(os.pread(segment.fd, HEADER_SIZE, b.position))
                    self.update(head, head.base_offset, head.max_timestamp)

    def clear(self) -> None:
        self.producers.clear()

    # ------------------------------------------------------------ snapshot

    def save(self, offset: int) -> None:
        """Atomically writes the state as of log end offset ``offset``."""
        doc = {
            "offset": offset,
            "producers": {
                str(pid): {
                    "epoch": e.epoch,
                    "batches": [
                        [m.first_seq, m.last_seq, m.first_offset, m.last_offset, m.max_timestamp]
                        for m in e.batches
                    ],
                }
                for pid, e in self.producers.items()
            },
        }
        write_atomically(self.path, json.dumps(doc).encode())

    def load(self, log_end_offset: int) -> int | None:
        """Loads the snapshot if usable; returns the offset to replay from (None = no snapshot)."""
        self.clear()
        try:
            doc = json.loads(self.path.read_text())
            offset = int(doc["offset"])
            if offset > log_end_offset:
                return None
            for pid, raw in doc["producers"].items():
                entry = ProducerEntry(int(raw["epoch"]))
                for fields in raw["batches"]:
                    entry.batches.append(BatchMetadata(*(int(x) for x in fields)))
                self.producers[int(pid)] = entry
        except (OSError, ValueError, KeyError, TypeError):
            self.clear()
            return None
        return offset

    def delete_snapshot(self) -> None:
        self.path.unlink(missing_ok=True)
