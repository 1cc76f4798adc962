"""Producer state of one partition: what makes retries exactly-once and transactions visible.

For each producer id the log remembers its epoch and the sequence numbers and offsets of its
last ``MAX_BATCHES`` (5, Kafka's ``max.in.flight.requests.per.connection`` limit) batches:

- a batch whose sequence range equals a remembered one is a *duplicate* (the producer retried
  after a lost response): the caller returns the original offsets and writes nothing;
- a lower epoch than the known one is a zombie producer: ``InvalidProducerEpochError``;
- a higher epoch must start at sequence 0; the same epoch must continue at last sequence + 1
  (wrapping at 2**31): otherwise ``OutOfOrderSequenceError`` (a batch was lost in between);
- an unknown producer id is accepted at any sequence, as Kafka does since KIP-360, because its
  state may have been dropped with old segments.

Transactions (KIP-98): a producer's first transactional batch opens its transaction in this
partition at that batch's offset; the coordinator's marker (commit or abort) closes it. The
*first unstable offset* is the first offset of the oldest open transaction; the last stable
offset (LSO) that ``read_committed`` consumers read up to is that, capped by the high
watermark. A closed transaction stays unstable until the high watermark passes its marker
(``_unreplicated``), so a consumer never reads data whose marker a failover could still lose.
A marker from an older producer epoch, or from an older coordinator epoch than the last one
seen, is fenced (``check_marker``): a zombie coordinator cannot end a newer transaction.

Persistence (design choice, Kafka's): a JSON snapshot ``producer-state.json`` tagged with the
log end offset it covers (epochs, sequences, coordinator epochs, open transactions) is written
atomically (temp + fsync + rename) on segment roll and on close. On open the snapshot is
loaded if it is not ahead of the recovered log (``load``), and the batch headers after it
are replayed (``replay``): headers carry producer id, epoch, sequences and the transactional
and control bits, and a marker's type is read from the 16-byte record after its header; no
other record is ever decoded. Replay reports every abort it sees so the caller rebuilds the
transaction indexes from that point.

Not thread-safe by itself: the PartitionLog lock guards it.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from broker.errors import (
    InvalidProducerEpochError,
    OutOfOrderSequenceError,
    TransactionCoordinatorFencedError,
)
from broker.log._atomic import write_atomically
from broker.log.batch import ATTR_CONTROL, ATTR_TRANSACTIONAL, BatchHeader, read_header
from broker.log.markers import MARKER_PEEK, read_marker
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
    coordinator_epoch: int = -1
    txn_first_offset: int = -1
    """First offset of this producer's open transaction in the partition; -1 if none."""
    last_timestamp: int = -1

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1


class CompletedTxn(NamedTuple):
    """A transaction a marker just closed in this partition."""

    producer_id: int
    first_offset: int
    last_offset: int  # the marker's offset
    aborted: bool
    had_data: bool  # False: the transaction wrote nothing here (an offsets-only partition)


def _is_idempotent(header: BatchHeader) -> bool:
    return header.producer_id >= 0 and header.base_sequence >= 0


class ProducerStateManager:
    """Sequence/epoch bookkeeping and open transactions per producer id for one partition."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.producers: dict[int, ProducerEntry] = {}
        self.ongoing: dict[int, int] = {}  # producer id -> first offset of its open txn
        self._unreplicated: list[CompletedTxn] = []
        self._first_ongoing: int | None = None  # min(ongoing.values()), kept current

    # ------------------------------------------------------------ append checks

    def check(self, headers: list[BatchHeader]) -> BatchMetadata | None:
        """Validates a request's batches in order; returns the cached metadata of a duplicate.

        Raises before anything is written. Batches of one producer within the request are
        checked against each other too (each must follow the previous).
        """
        expected: dict[int, tuple[int, int]] = {}  # pid -> (epoch, last seq) incl. this request
        for header in headers:
            if not _is_idempotent(header):
                if header.producer_id >= 0 and header.attributes & ATTR_TRANSACTIONAL:
                    self._check_epoch(header.producer_id, header.producer_epoch)
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

    def _check_epoch(self, pid: int, epoch: int) -> None:
        entry = self.producers.get(pid)
        if entry is not None and epoch < entry.epoch:
            raise InvalidProducerEpochError(
                f"producer {pid} epoch {epoch} is older than current epoch {entry.epoch}"
            )

    def check_marker(self, pid: int, epoch: int, coordinator_epoch: int) -> None:
        """Refuses a marker from a fenced producer epoch or an older coordinator."""
        self._check_epoch(pid, epoch)
        entry = self.producers.get(pid)
        if entry is not None and coordinator_epoch < entry.coordinator_epoch:
            raise TransactionCoordinatorFencedError(
                f"marker for producer {pid} from coordinator epoch {coordinator_epoch}; "
                f"epoch {entry.coordinator_epoch} already wrote here"
            )

    # ------------------------------------------------------------ updates

    def update(self, header: BatchHeader, base_offset: int, max_timestamp: int) -> None:
        """Records an appended data batch; ``base_offset``/``max_timestamp`` as written."""
        pid = header.producer_id
        if pid < 0:
            return
        entry = self.producers.get(pid)
        if entry is None or header.producer_epoch != entry.epoch:
            fresh = ProducerEntry(header.producer_epoch)
            if entry is not None:  # a new epoch keeps what is not about sequences
                fresh.coordinator_epoch = entry.coordinator_epoch
                fresh.txn_first_offset = entry.txn_first_offset
            entry = self.producers[pid] = fresh
        entry.last_timestamp = max_timestamp
        if header.base_sequence >= 0:
            entry.batches.append(
                BatchMetadata(
                    header.base_sequence,
                    header.last_sequence,
                    base_offset,
                    base_offset + header.last_offset_delta,
                    max_timestamp,
                )
            )
        if header.attributes & ATTR_TRANSACTIONAL and entry.txn_first_offset < 0:
            entry.txn_first_offset = base_offset
            self.ongoing[pid] = base_offset
            if self._first_ongoing is None or base_offset < self._first_ongoing:
                self._first_ongoing = base_offset

    def complete_txn(
        self, pid: int, epoch: int, coordinator_epoch: int, marker_offset: int, timestamp: int,
        aborted: bool,
    ) -> CompletedTxn:  # fmt: skip
        """Applies a marker at ``marker_offset``: closes the producer's open transaction."""
        entry = self.producers.get(pid)
        if entry is None or epoch != entry.epoch:
            fresh = ProducerEntry(epoch)  # a marker's epoch bump resets sequences (KIP-360)
            if entry is not None:
                fresh.txn_first_offset = entry.txn_first_offset
                fresh.coordinator_epoch = entry.coordinator_epoch
            entry = self.producers[pid] = fresh
        entry.coordinator_epoch = max(entry.coordinator_epoch, coordinator_epoch)
        entry.last_timestamp = timestamp
        first = entry.txn_first_offset
        entry.txn_first_offset = -1
        if self.ongoing.pop(pid, None) is not None:
            self._first_ongoing = min(self.ongoing.values(), default=None)
        done = CompletedTxn(pid, first if first >= 0 else marker_offset, marker_offset, aborted,
                            first >= 0)  # fmt: skip
        if done.had_data:
            self._unreplicated.append(done)
        return done

    def lso_after(self, done: CompletedTxn) -> int:
        """The LSO right after ``done`` closed (a transaction-index entry's last field)."""
        return done.last_offset + 1 if self._first_ongoing is None else self._first_ongoing

    def first_unstable_offset(self, high_watermark: int) -> int | None:
        """First offset a ``read_committed`` reader must not pass yet (None: nothing open).

        Closed transactions whose marker the high watermark has passed are forgotten here.
        """
        pending = self._unreplicated
        if pending:
            pending = self._unreplicated = [t for t in pending if t.last_offset >= high_watermark]
        first = self._first_ongoing
        if pending:
            oldest = min(t.first_offset for t in pending)
            first = oldest if first is None else min(first, oldest)
        return first

    # ------------------------------------------------------------ replay

    def replay(
        self,
        segments: Sequence[Segment],
        start: int,
        on_abort: Callable[[Segment, CompletedTxn], None] | None = None,
    ) -> None:
        """Replays the batch headers from offset ``start`` onto the loaded state (``load``).

        Every aborted transaction whose marker is at or after ``start`` is passed to
        ``on_abort`` (with its segment), in log order, so the caller can rebuild the
        transaction indexes from there.
        """
        for segment in segments:
            if segment.next_offset <= start:
                continue
            for b in segment.scan():
                if b.base_offset < start:
                    continue
                raw = segment.pread(MARKER_PEEK, b.position)
                head = read_header(raw)
                if head.attributes & ATTR_CONTROL:
                    if head.producer_id < 0:
                        continue
                    if b.size > len(raw):
                        raw = segment.pread(b.size, b.position)
                    marker = read_marker(raw)
                    done = self.complete_txn(
                        head.producer_id, head.producer_epoch, marker.coordinator_epoch,
                        head.base_offset, head.max_timestamp, not marker.commit,
                    )  # fmt: skip
                    if done.aborted and done.had_data and on_abort is not None:
                        on_abort(segment, done)
                else:
                    self.update(head, head.base_offset, head.max_timestamp)
        self._unreplicated = []  # replayed data was all written before the restart

    def clear(self) -> None:
        self.producers.clear()
        self.ongoing.clear()
        self._unreplicated = []
        self._first_ongoing = None

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
                    "coordinator_epoch": e.coordinator_epoch,
                    "txn_first_offset": e.txn_first_offset,
                    "last_timestamp": e.last_timestamp,
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
                entry.coordinator_epoch = int(raw.get("coordinator_epoch", -1))
                entry.txn_first_offset = int(raw.get("txn_first_offset", -1))
                entry.last_timestamp = int(raw.get("last_timestamp", -1))
                self.producers[int(pid)] = entry
                if entry.txn_first_offset >= 0:
                    self.ongoing[int(pid)] = entry.txn_first_offset
        except (OSError, ValueError, KeyError, TypeError):
            self.clear()
            return None
        self._first_ongoing = min(self.ongoing.values(), default=None)
        return offset

    def delete_snapshot(self) -> None:
        self.path.unlink(missing_ok=True)
