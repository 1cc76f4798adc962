"""TransactionCoordinator in-process over real storage: epochs, KIP-360 bumps, producer-id
rotation, EndTxn answers, expiry and reload of ``__transaction_state`` (Kafka's rules)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from kio.schema.errors import ErrorCode

from broker.config import BrokerConfig
from broker.log.log_manager import LogManager
from broker.producer_ids import ProducerIdAllocator
from broker.protocol.notifier import AppendNotifier
from broker.transaction import TransactionCoordinator, local_coordinator
from broker.transaction.metadata import MAX_EPOCH
from broker.transaction.records import decode_value, encode_value
from broker.transaction.state import TxnState
from broker.transaction.state_log import TOPIC

OK = ErrorCode.none


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(scenario())  # type: ignore[arg-type]


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


@asynccontextmanager
async def opened(data_dir: Path, clock: Clock | None = None) -> AsyncIterator[Any]:
    logs = LogManager(data_dir)
    logs.load()
    config = BrokerConfig(data_dir=data_dir, transaction_state_log_num_partitions=3,
                          transactional_id_expiration_ms=60_000)  # fmt: skip
    broker = SimpleNamespace(
        logs=logs, config=config, producer_ids=ProducerIdAllocator(data_dir),
        notifier=AppendNotifier(), coordinator=None, cluster=None,
    )  # fmt: skip
    txns: TransactionCoordinator = local_coordinator(broker)
    if clock is not None:
        txns._clock = clock
    await txns.start()
    if "t" not in logs.topics():
        logs.create_topic("t", 2)
    try:
        yield txns
    finally:
        await txns.stop()
        logs.close()


async def settle(txns: TransactionCoordinator, txn_id: str) -> TxnState:
    """Waits (bounded) until the id leaves Prepare*: its markers were written."""
    for _ in range(200):
        _, meta = txns.describe(txn_id)
        assert meta is not None
        if meta.state not in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            return meta.state
        await asyncio.sleep(0.01)
    raise AssertionError("markers never completed")


def test_every_init_bumps_the_epoch_and_old_epochs_are_fenced(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(tmp_path) as txns:
            code, pid, epoch = await txns.init_producer_id("a", 60_000)
            assert (code, epoch) == (OK, 0)
            assert (await txns.init_producer_id("a", 60_000))[1:] == (pid, 1)
            tp = frozenset({("t", 0)})
            assert await txns.add_partitions("a", pid, 0, tp) == ErrorCode.producer_fenced
            assert await txns.add_partitions("a", pid + 1, 1, tp) == (
                ErrorCode.invalid_producer_id_mapping
            )
            assert await txns.add_partitions("a", pid, 1, tp) == OK
            assert await txns.end_txn("a", pid, 0, True) == ErrorCode.producer_fenced

    run(scenario)


def test_kip_360_bump_and_its_retry(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(tmp_path) as txns:
            _, pid, _ = await txns.init_producer_id("a", 60_000)
            assert await txns.init_producer_id("a", 60_000, pid, 0) == (OK, pid, 1)
            # the answer was lost and the producer retries with its old epoch: same answer
            assert await txns.init_producer_id("a", 60_000, pid, 0) == (OK, pid, 1)
            assert (await txns.init_producer_id("a", 60_000, pid + 7, 1))[0] == (
                ErrorCode.producer_fenced
            )

    run(scenario)


def test_an_exhausted_epoch_moves_to_a_new_producer_id(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(tmp_path) as txns:
            _, pid, _ = await txns.init_producer_id("a", 60_000)
            _, meta = txns.describe("a")
            assert meta is not None
            meta.value = dataclasses.replace(meta.value, producer_epoch=MAX_EPOCH - 1)
            code, new_pid, epoch = await txns.init_producer_id("a", 60_000)
            assert (code, epoch) == (OK, 0) and new_pid != pid
            assert meta.value.last_producer_id == pid

    run(scenario)


def test_end_txn_answers(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(tmp_path) as txns:
            _, pid, epoch = await txns.init_producer_id("a", 60_000)
            assert await txns.end_txn("a", pid, epoch, True) == ErrorCode.invalid_txn_state
            await txns.add_partitions("a", pid, epoch, frozenset({("t", 0), ("t", 1)}))
            assert await txns.end_txn("a", pid, epoch, True) == OK
            assert await settle(txns, "a") is TxnState.COMPLETE_COMMIT
            assert await txns.end_txn("a", pid, epoch, True) == OK  # a retried commit
            assert await txns.end_txn("a", pid, epoch, False) == ErrorCode.invalid_txn_state
            assert txns.describe("nobody")[0] == ErrorCode.transactional_id_not_found

    run(scenario)


def test_state_survives_a_reload_and_expired_ids_are_deleted(tmp_path: Path) -> None:
    clock = Clock()

    async def first() -> int:
        async with opened(tmp_path, clock) as txns:
            _, pid, epoch = await txns.init_producer_id("kept", 60_000)
            await txns.add_partitions("kept", pid, epoch, frozenset({("t", 1)}))
            await txns.init_producer_id("old", 60_000)
            clock.now += 30_000
            await txns.init_producer_id("recent", 60_000)
            clock.now += 40_000  # "old" idle for 70 s, "recent" for 40 s
            await txns.expire_transactional_ids()
            assert txns.describe("old")[0] == ErrorCode.transactional_id_not_found
            assert txns.describe("recent")[0] == OK
            return pid

    async def second(pid: int) -> None:
        async with opened(tmp_path, clock) as txns:
            _, meta = txns.describe("kept")
            assert meta is not None and meta.state is TxnState.ONGOING
            assert (meta.producer_id, meta.partitions) == (pid, frozenset({("t", 1)}))
            assert txns.describe("old")[0] == ErrorCode.transactional_id_not_found
            assert txns.describe("recent")[0] == OK

    pid = run(first)
    run(lambda: second(pid))


def test_value_codec_reads_what_it_writes_in_kafkas_layout() -> None:
    from broker.transaction.records import TxnLogValue, decode_key, encode_key

    value = TxnLogValue(42, 3, 60_000, TxnState.ONGOING, frozenset({("a", 0), ("a", 2)}), 7, 5)
    raw = encode_value(value)
    assert raw[:2] == b"\x00\x00"  # value version 0
    assert decode_value(raw) == value
    empty = dataclasses.replace(value, state=TxnState.EMPTY, partitions=frozenset())
    assert encode_value(empty)[17:21] == b"\xff\xff\xff\xff"  # null partitions when Empty
    assert decode_key(encode_key("id")) == "id"
    assert TOPIC == "__transaction_state"
