"""TransactionCoordinator: the facade the transaction handlers talk to (Kafka's, KIP-98).

It answers InitProducerId with a transactional id, AddPartitionsToTxn and AddOffsetsToTxn
(the partitions a transaction writes to), EndTxn, DescribeTransactions and ListTransactions,
over three parts: ``TransactionStateManager`` (ids and their durable state per
``__transaction_state`` partition), ``TransactionMetadata`` (the state machine of one id) and
``TxnMarkerWriter`` (markers into every partition of a finished transaction).

The rules, in short (Kafka's ``TransactionCoordinator``):

- InitProducerId fences: every call bumps the epoch (a zombie with the old epoch is refused
  everywhere: PRODUCER_FENCED here, INVALID_PRODUCER_EPOCH by the partitions); if a
  transaction is still open it is first aborted with epoch + 1 and the caller told
  CONCURRENT_TRANSACTIONS, so its retry gets the next epoch. With a producer id and epoch
  (KIP-360, after an abortable error) the same producer bumps its own epoch.
- EndTxn writes PrepareCommit/PrepareAbort, *answers*, then has the markers written and
  finally writes CompleteCommit/CompleteAbort. Until then the id answers
  CONCURRENT_TRANSACTIONS, which clients retry.
- A transaction open longer than its timeout is aborted by the coordinator with a fencing
  epoch bump (every ``transaction.abort.timed.out.transaction.cleanup.interval.ms``); ids
  idle for ``transactional.id.expiration.ms`` are deleted (a tombstone).
- A loaded partition's PrepareCommit/PrepareAbort transactions get their markers (again):
  that is how a coordinator crash mid-commit ends in a complete commit, never half of one.

Everything runs on the broker's event loop; a transition is prepared and marked pending
before its first await (see ``metadata``), so no locks are needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.transaction.metadata import TransactionMetadata, epoch_exhausted
from broker.transaction.records import TxnLogValue
from broker.transaction.state import TxnState

if TYPE_CHECKING:
    from broker.config import BrokerConfig
    from broker.transaction.marker_writer import TxnMarkerWriter
    from broker.transaction.state_log import LocalTxnLog
    from broker.transaction.state_manager import TransactionStateManager

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]
_RETRY_S = 0.1


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class TransactionCoordinator:
    def __init__(
        self,
        config: BrokerConfig,
        state: TransactionStateManager,
        markers: TxnMarkerWriter,
        allocate_producer_id: Callable[[], Awaitable[int]],
        *,
        local: LocalTxnLog | None = None,
        clock: Callable[[], int] = wall_clock_ms,
    ) -> None:
        self.config = config
        self.state = state
        self.markers = markers
        self._allocate = allocate_producer_id
        self._local = local
        self._clock = clock
        self._tasks: set[asyncio.Task[None]] = set()
        self.active = False

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Single node: loads an existing ``__transaction_state``; starts the timers."""
        if self._local is not None and self._local.exists():
            self._load_all_local()
        self.active = True
        loop = asyncio.get_running_loop()
        cfg = self.config
        self._spawn(self._every(cfg.transaction_abort_timed_out_transaction_cleanup_interval_ms,
                                self.abort_timed_out), loop)  # fmt: skip
        self._spawn(self._every(cfg.transaction_remove_expired_transaction_cleanup_interval_ms,
                                self.expire_transactional_ids), loop)  # fmt: skip

    async def stop(self) -> None:
        self.active = False
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def ensure_local_topic(self) -> None:
        """Single node: creates ``__transaction_state`` on first use and coordinates it."""
        if self._local is not None and not self.state.owned:
            self._local.create()
            self._load_all_local()

    def _load_all_local(self) -> None:
        assert self._local is not None
        for partition in range(self._local.partition_count()):
            self.on_election(partition, 0)

    def _spawn(
        self, coro: Coroutine[Any, Any, None], loop: asyncio.AbstractEventLoop | None = None
    ) -> None:
        task = (loop or asyncio.get_running_loop()).create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _every(self, interval_ms: int, job: Callable[[], Awaitable[None]]) -> None:
        while True:
            await asyncio.sleep(max(interval_ms, 10) / 1000)
            try:
                await job()
            except Exception:
                log.exception("transaction coordinator background job failed")

    def on_election(self, partition: int, coordinator_epoch: int) -> None:
        """This broker now leads ``__transaction_state`` partition ``partition``."""
        for meta in self.state.load_partition(partition, coordinator_epoch):
            log.info(
                "resuming transaction markers after load",
                extra={"transactional_id": meta.transactional_id, "state": meta.state.kafka_name},
            )
            self._spawn(self._complete(meta, coordinator_epoch))

    def on_resignation(self, partition: int) -> None:
        """Another broker leads the partition now; its marker writes stop at their next step."""
        self.state.unload_partition(partition)

    def partition_for(self, transactional_id: str) -> int:
        return self.state.partition_for(transactional_id)

    # ------------------------------------------------------------ InitProducerId

    async def init_producer_id(
        self, transactional_id: str, timeout_ms: int, expected_pid: int = -1,
        expected_epoch: int = -1,
    ) -> tuple[ErrorCode, int, int]:  # fmt: skip
        """(error, producer id, epoch) for a transactional producer."""
        if not transactional_id:
            return ErrorCode.invalid_request, -1, -1
        if not 0 < timeout_ms <= self.config.transaction_max_timeout_ms:
            return ErrorCode.invalid_transaction_timeout, -1, -1
        self.ensure_local_topic()
        code, owned, meta = self.state.lookup(transactional_id)
        if owned is None:
            return code, -1, -1
        if meta is None:
            pid = await self._allocate()
            code, owned, meta = self.state.lookup(transactional_id)
            if owned is None:
                return code, -1, -1
            if meta is None:
                meta = TransactionMetadata(
                    transactional_id,
                    TxnLogValue(
                        pid, -1, timeout_ms, TxnState.EMPTY, frozenset(), self._clock(), -1
                    ),
                )
                owned.txns[transactional_id] = meta
        expected = expected_pid >= 0
        if meta.pending is not None:
            return ErrorCode.concurrent_transactions, -1, -1
        if expected and not (
            meta.producer_epoch == -1
            or expected_pid == meta.producer_id
            or (expected_pid == meta.value.last_producer_id and epoch_exhausted(expected_epoch))
        ):
            return ErrorCode.producer_fenced, -1, -1
        epoch = owned.coordinator_epoch
        if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            return ErrorCode.concurrent_transactions, -1, -1
        if meta.state is TxnState.ONGOING:
            fence = meta.prepare_fence_epoch()
            code = await self._end(meta, epoch, meta.producer_id, fence.value.producer_epoch,
                                   commit=False, from_client=False)  # fmt: skip
            log.info(
                "fenced the previous producer: aborting its open transaction",
                extra={"transactional_id": transactional_id, "error": code.name},
            )
            return (code if code != ErrorCode.none else ErrorCode.concurrent_transactions), -1, -1
        now = self._clock()
        if epoch_exhausted(meta.producer_epoch) and (
            not expected or expected_epoch == meta.producer_epoch
        ):
            new_pid = await self._allocate()
            if meta.pending is not None:
                return ErrorCode.concurrent_transactions, -1, -1
            transit = meta.prepare_rotation(new_pid, timeout_ms, now, expected)
        else:
            result = meta.prepare_increment_epoch(timeout_ms, expected_epoch if expected else None,
                                                  now)  # fmt: skip
            if isinstance(result, ErrorCode):
                return result, -1, -1
            transit = result
        code = await self.state.append(meta, epoch, transit)
        if code != ErrorCode.none:
            return code, -1, -1
        log.info(
            "initialized transactional producer",
            extra={"transactional_id": transactional_id, "producer_id": transit.value.producer_id,
                   "epoch": transit.value.producer_epoch},
        )  # fmt: skip
        return ErrorCode.none, transit.value.producer_id, transit.value.producer_epoch

    # ------------------------------------------------------------ AddPartitions / AddOffsets

    async def add_partitions(
        self, transactional_id: str, producer_id: int, producer_epoch: int,
        partitions: frozenset[TopicPartition], verify_only: bool = False,
    ) -> ErrorCode:  # fmt: skip
        if not transactional_id:
            return ErrorCode.invalid_request
        code, owned, meta = self.state.lookup(transactional_id)
        if owned is None:
            return code
        if meta is None or meta.producer_id != producer_id:
            return ErrorCode.invalid_producer_id_mapping
        if meta.producer_epoch != producer_epoch:
            return ErrorCode.producer_fenced
        if verify_only:
            ok = meta.state is TxnState.ONGOING and partitions <= meta.partitions
            return ErrorCode.none if ok else ErrorCode.invalid_txn_state
        if meta.pending is not None or meta.state in (
            TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT
        ):  # fmt: skip
            return ErrorCode.concurrent_transactions
        if meta.state is TxnState.ONGOING and partitions <= meta.partitions:
            return ErrorCode.none
        transit = meta.prepare_add_partitions(partitions, self._clock())
        return await self.state.append(meta, owned.coordinator_epoch, transit)

    # ------------------------------------------------------------ EndTxn

    async def end_txn(
        self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool
    ) -> ErrorCode:
        if not transactional_id:
            return ErrorCode.invalid_request
        code, owned, meta = self.state.lookup(transactional_id)
        if owned is None:
            return code
        if meta is None:
            return ErrorCode.invalid_producer_id_mapping
        return await self._end(meta, owned.coordinator_epoch, producer_id, producer_epoch,
                               commit, from_client=True)  # fmt: skip

    async def _end(
        self, meta: TransactionMetadata, coordinator_epoch: int, producer_id: int,
        producer_epoch: int, commit: bool, from_client: bool,
    ) -> ErrorCode:  # fmt: skip
        if meta.producer_id != producer_id:
            return ErrorCode.invalid_producer_id_mapping
        if (from_client and producer_epoch != meta.producer_epoch) or (
            producer_epoch < meta.producer_epoch
        ):
            return ErrorCode.producer_fenced
        fencing = meta.pending is TxnState.PREPARE_EPOCH_FENCE and not from_client
        if meta.pending is not None and not fencing:
            return ErrorCode.concurrent_transactions
        state = meta.state
        if state is TxnState.ONGOING:
            if fencing:
                meta.take_fence(producer_epoch)
            transit = meta.prepare_end(commit, self._clock())
            code = await self.state.append(meta, coordinator_epoch, transit)
            if code != ErrorCode.none:
                meta.failed_epoch_fence = meta.failed_epoch_fence or fencing
                return code
            self._spawn(self._complete(meta, coordinator_epoch))
            return ErrorCode.none
        done = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
        preparing = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
        if state is done:
            return ErrorCode.none  # a retry of an EndTxn that completed
        if state is preparing:
            return ErrorCode.concurrent_transactions
        if fencing:
            meta.abandon()
        return ErrorCode.invalid_txn_state

    async def _complete(self, meta: TransactionMetadata, coordinator_epoch: int) -> None:
        """Markers into every partition, then CompleteCommit/CompleteAbort (retried)."""
        txn_id = meta.transactional_id
        value = meta.value
        commit = value.state is TxnState.PREPARE_COMMIT

        def valid() -> bool:
            return (
                self.active
                and self.state.still_owns(txn_id, coordinator_epoch)
                and (self.state.lookup(txn_id)[2] is meta)
            )

        done = await self.markers.write(
            txn_id, value.partitions, value.producer_id, value.producer_epoch, commit,
            coordinator_epoch, valid,
        )  # fmt: skip
        while done and valid():
            if meta.pending is None:
                transit = meta.prepare_complete(self._clock())
                code = await self.state.append(meta, coordinator_epoch, transit)
                if code in (ErrorCode.none, ErrorCode.not_coordinator):
                    if code == ErrorCode.none:
                        log.debug("transaction completed", extra={"transactional_id": txn_id,
                                  "state": transit.value.state.kafka_name})  # fmt: skip
                    return
            await asyncio.sleep(_RETRY_S)

    # ------------------------------------------------------------ timers

    async def abort_timed_out(self) -> None:
        """Aborts, with a fencing epoch bump, every transaction open past its timeout."""
        now = self._clock()
        for meta in list(self.state.transactions()):
            value = meta.value
            if (
                meta.state is not TxnState.ONGOING
                or meta.pending is not None
                or value.start_ms + value.timeout_ms >= now
            ):
                continue
            code, owned, _ = self.state.lookup(meta.transactional_id)
            if owned is None:
                continue
            fence = meta.prepare_fence_epoch()
            code = await self._end(
                meta, owned.coordinator_epoch, meta.producer_id, fence.value.producer_epoch,
                commit=False, from_client=False,
            )  # fmt: skip
            log.info(
                "aborted a transaction open longer than its timeout",
                extra={"transactional_id": meta.transactional_id, "timeout_ms": value.timeout_ms,
                       "error": code.name},
            )  # fmt: skip

    async def expire_transactional_ids(self) -> None:
        """Deletes ids with no transaction open for ``transactional.id.expiration.ms``."""
        now = self._clock()
        horizon = self.config.transactional_id_expiration_ms
        for meta in list(self.state.transactions()):
            if (
                not meta.state.completed
                or meta.pending is not None
                or meta.value.last_update_ms + horizon > now
            ):
                continue
            _, owned, _ = self.state.lookup(meta.transactional_id)
            if owned is None:
                continue
            code = await self.state.append(meta, owned.coordinator_epoch, meta.prepare_dead())
            log.info(
                "expired transactional id",
                extra={"transactional_id": meta.transactional_id, "error": code.name},
            )

    # ------------------------------------------------------------ admin

    def describe(self, transactional_id: str) -> tuple[ErrorCode, TransactionMetadata | None]:
        if not transactional_id:
            return ErrorCode.invalid_request, None
        code, owned, meta = self.state.lookup(transactional_id)
        if owned is None:
            return code, None
        if meta is None:
            return ErrorCode.transactional_id_not_found, None
        return ErrorCode.none, meta

    def list_transactions(
        self, states: list[str], producer_ids: list[int], min_duration_ms: int = -1,
        pattern: str | None = None,
    ) -> tuple[list[str], list[TransactionMetadata]]:  # fmt: skip
        """(unknown state filters, matching transactions this broker coordinates)."""
        wanted = {TxnState.by_kafka_name(s) for s in states}
        unknown = [s for s in states if TxnState.by_kafka_name(s) is None]
        wanted.discard(None)
        regex = re.compile(pattern) if pattern else None
        now = self._clock()
        out = []
        for meta in self.state.transactions():
            if wanted and meta.state not in wanted:
                continue
            if producer_ids and meta.producer_id not in producer_ids:
                continue
            start = meta.value.start_ms
            if min_duration_ms >= 0 and (start < 0 or now - start < min_duration_ms):
                continue
            if regex is not None and not regex.search(meta.transactional_id):
                continue
            out.append(meta)
        return unknown, out
