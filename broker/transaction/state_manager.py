"""TransactionStateManager: the transactional ids this broker coordinates, by state partition.

It owns the in-memory map ``partition -> (coordinator epoch, {transactional id ->
TransactionMetadata})`` for the ``__transaction_state`` partitions this broker leads (all of
them on a single node), loads a partition by replaying it (newest record per id wins, a
tombstone removes the id) and drops it when leadership moves. The coordinator epoch of a
partition is its leader epoch when it was loaded (0 on a single node); it goes into every
marker, so a zombie coordinator's markers are refused by the partitions (``check_marker``).

``append`` is the durable half of a transition: encode, append to the partition (through the
``TxnLogBackend``), then — only if this broker still coordinates that partition at the same
epoch — make the transition current. Anything else answers NOT_COORDINATOR and leaves the
metadata as it was.

Loop-only, like the coordinator.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from kio.schema.errors import ErrorCode

from broker.coordinator.offsets_topic import partition_for
from broker.log.records import Record, build_batch
from broker.transaction.metadata import TransactionMetadata, Transit
from broker.transaction.records import decode_key, decode_value, encode_key, encode_value
from broker.transaction.state import TxnState
from broker.transaction.state_log import TOPIC, TxnLogBackend

log = logging.getLogger(__name__)


@dataclass
class OwnedPartition:
    coordinator_epoch: int
    txns: dict[str, TransactionMetadata] = field(default_factory=dict)


class TransactionStateManager:
    def __init__(
        self, backend: TxnLogBackend, clock: Callable[[], int] = lambda: int(time.time() * 1000)
    ) -> None:
        self.backend = backend
        self.clock = clock
        self.owned: dict[int, OwnedPartition] = {}
        self.partitions = 0

    def partition_for(self, transactional_id: str) -> int:
        if self.partitions == 0:
            self.partitions = self.backend.partition_count()
        return partition_for(transactional_id, max(self.partitions, 1))

    # ------------------------------------------------------------ ownership

    def lookup(
        self, transactional_id: str
    ) -> tuple[ErrorCode, OwnedPartition | None, TransactionMetadata | None]:
        """(NONE / NOT_COORDINATOR, the owned partition, the id's metadata if known)."""
        owned = self.owned.get(self.partition_for(transactional_id))
        if owned is None:
            return ErrorCode.not_coordinator, None, None
        meta = owned.txns.get(transactional_id)
        if meta is not None and meta.state is TxnState.DEAD:
            meta = None
        return ErrorCode.none, owned, meta

    def load_partition(self, partition: int, coordinator_epoch: int) -> list[TransactionMetadata]:
        """Replays ``partition``; returns the ids left in PrepareCommit/PrepareAbort, whose
        markers the coordinator must (re)send."""
        self.partitions = max(self.partitions, self.backend.partition_count())
        txns: dict[str, TransactionMetadata] = {}
        for key, value in self.backend.replay(partition):
            try:
                txn_id = decode_key(key)
                if value is None:
                    txns.pop(txn_id, None)
                    continue
                txns[txn_id] = TransactionMetadata(txn_id, decode_value(value))
            except (ValueError, UnicodeDecodeError) as exc:
                log.warning(
                    "skipping an unreadable transaction state record",
                    extra={"partition": f"{TOPIC}-{partition}", "error": str(exc)},
                )
        self.owned[partition] = OwnedPartition(coordinator_epoch, txns)
        log.log(
            logging.INFO if txns else logging.DEBUG,
            "loaded transactions",
            extra={"partition": f"{TOPIC}-{partition}", "transactional_ids": len(txns),
                   "coordinator_epoch": coordinator_epoch},
        )  # fmt: skip
        return [
            m for m in txns.values()
            if m.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)
        ]  # fmt: skip

    def unload_partition(self, partition: int) -> None:
        owned = self.owned.pop(partition, None)
        if owned is not None:
            log.info(
                "unloaded transactions",
                extra={"partition": f"{TOPIC}-{partition}", "transactional_ids": len(owned.txns)},
            )

    def still_owns(self, transactional_id: str, coordinator_epoch: int) -> bool:
        owned = self.owned.get(self.partition_for(transactional_id))
        return owned is not None and owned.coordinator_epoch == coordinator_epoch

    def transactions(self) -> Iterator[TransactionMetadata]:
        for owned in list(self.owned.values()):
            for meta in list(owned.txns.values()):
                if meta.state is not TxnState.DEAD:
                    yield meta

    # ------------------------------------------------------------ durable transitions

    async def append(
        self, meta: TransactionMetadata, coordinator_epoch: int, transit: Transit
    ) -> ErrorCode:
        """Writes ``transit``; on success (and still coordinating) it becomes current."""
        txn_id = meta.transactional_id
        partition = self.partition_for(txn_id)
        value = None if transit.value.state is TxnState.DEAD else encode_value(transit.value)
        batch = build_batch([Record(0, self.clock(), encode_key(txn_id), value)])
        code = await self.backend.append(partition, batch)
        if code == ErrorCode.none and not self.still_owns(txn_id, coordinator_epoch):
            code = ErrorCode.not_coordinator
        if code != ErrorCode.none:
            meta.abandon()
            log.info(
                "transaction state change not written",
                extra={"transactional_id": txn_id, "state": transit.value.state.kafka_name,
                       "error": code.name},
            )  # fmt: skip
            return code
        meta.complete(transit)
        if transit.value.state is TxnState.DEAD:
            owned = self.owned.get(partition)
            if owned is not None and owned.txns.get(txn_id) is meta:
                del owned.txns[txn_id]
        return ErrorCode.none
