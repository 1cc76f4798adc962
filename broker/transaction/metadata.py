"""TransactionMetadata: one transactional id's durable state plus the transition in flight.

Kafka's two-step update, which is what keeps the coordinator consistent with its log: an
operation first *prepares* a transition (a ``Transit``: the complete next value, checked
against ``state.VALID_PREVIOUS``) and marks it pending; the value is appended to
``__transaction_state``; only when that append is durable does ``complete`` make it current.
While a transition is pending, other requests for the id get CONCURRENT_TRANSACTIONS, so two
writes for one id are never in flight together. A failed append just clears the pending mark.

Epochs: a producer epoch is an int16; at ``MAX_EPOCH - 1`` it is *exhausted* and the next
InitProducerId moves the id to a new producer id at epoch 0 (so the coordinator can always
fence with one more bump). ``last_producer_epoch`` (in memory only, as in Kafka's v0 record)
lets a producer retrying a KIP-360 epoch bump whose answer it lost get the same answer.

Loop-only (the coordinator runs on the broker's event loop): no locks.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from kio.schema.errors import ErrorCode

from broker.transaction.records import TxnLogValue
from broker.transaction.state import IllegalTransition, TxnState, check_transition

MAX_EPOCH = 32767
NO_EPOCH = -1


def epoch_exhausted(epoch: int) -> bool:
    return epoch >= MAX_EPOCH - 1


@dataclass(frozen=True)
class Transit:
    """A prepared next value of a transactional id, not yet durable."""

    value: TxnLogValue
    last_producer_epoch: int


class TransactionMetadata:
    def __init__(self, transactional_id: str, value: TxnLogValue) -> None:
        self.transactional_id = transactional_id
        self.value = value
        self.last_producer_epoch = NO_EPOCH
        self.pending: TxnState | None = None
        self.failed_epoch_fence = False
        """A fencing bump whose append failed: the next fence reuses that epoch (it was
        never returned to a client), as Kafka does."""

    # ------------------------------------------------------------ views

    @property
    def state(self) -> TxnState:
        return self.value.state

    @property
    def producer_id(self) -> int:
        return self.value.producer_id

    @property
    def producer_epoch(self) -> int:
        return self.value.producer_epoch

    @property
    def partitions(self) -> frozenset[tuple[str, int]]:
        return self.value.partitions

    # ------------------------------------------------------------ transitions

    def _prepare(
        self, state: TxnState, last_epoch: int | None = None, **changes: object
    ) -> Transit:
        if self.pending is not None:
            raise IllegalTransition(
                f"{self.transactional_id}: {state.kafka_name} while {self.pending.kafka_name} "
                "is pending"
            )
        check_transition(self.state, state)
        value = dataclasses.replace(self.value, state=state, **changes)  # type: ignore[arg-type]
        self.pending = state
        return Transit(value, self.last_producer_epoch if last_epoch is None else last_epoch)

    def prepare_fence_epoch(self) -> Transit:
        """Ongoing -> (in memory) PrepareEpochFence with epoch + 1, before aborting."""
        bumped = self.producer_epoch if self.failed_epoch_fence else self.producer_epoch + 1
        return self._prepare(TxnState.PREPARE_EPOCH_FENCE, NO_EPOCH, producer_epoch=bumped)

    def prepare_increment_epoch(
        self, timeout_ms: int, expected_epoch: int | None, now_ms: int
    ) -> Transit | ErrorCode:
        """InitProducerId on a completed id: epoch + 1 (or a KIP-360 retry's same answer)."""
        bumped = self.producer_epoch + 1
        if expected_epoch is None:
            epoch, last = bumped, NO_EPOCH
        elif self.producer_epoch == NO_EPOCH or expected_epoch == self.producer_epoch:
            epoch, last = bumped, self.producer_epoch
        elif expected_epoch == self.last_producer_epoch:
            epoch, last = self.producer_epoch, self.last_producer_epoch  # a retried bump
        else:
            return ErrorCode.producer_fenced
        return self._prepare(
            TxnState.EMPTY, last, producer_epoch=epoch, timeout_ms=timeout_ms,
            partitions=frozenset(), start_ms=-1, last_update_ms=now_ms,
        )  # fmt: skip

    def prepare_rotation(
        self, new_producer_id: int, timeout_ms: int, now_ms: int, record_last_epoch: bool
    ) -> Transit:
        """The epoch is exhausted: continue under a new producer id at epoch 0."""
        return self._prepare(
            TxnState.EMPTY,
            self.producer_epoch if record_last_epoch else NO_EPOCH,
            producer_id=new_producer_id, last_producer_id=self.producer_id, producer_epoch=0,
            timeout_ms=timeout_ms, partitions=frozenset(), start_ms=-1, last_update_ms=now_ms,
        )  # fmt: skip

    def prepare_add_partitions(
        self, partitions: frozenset[tuple[str, int]], now_ms: int
    ) -> Transit:
        start = now_ms if self.state.completed else self.value.start_ms
        return self._prepare(
            TxnState.ONGOING, partitions=self.partitions | partitions, start_ms=start,
            last_update_ms=now_ms,
        )  # fmt: skip

    def prepare_end(self, commit: bool, now_ms: int) -> Transit:
        target = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
        return self._prepare(target, last_update_ms=now_ms)

    def prepare_complete(self, now_ms: int) -> Transit:
        commit = self.state is TxnState.PREPARE_COMMIT
        self.failed_epoch_fence = False
        return self._prepare(
            TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT,
            partitions=frozenset(), last_update_ms=now_ms,
        )  # fmt: skip

    def prepare_dead(self) -> Transit:
        return self._prepare(TxnState.DEAD, partitions=frozenset())

    def take_fence(self, fenced_epoch: int) -> None:
        """The abort that follows a fence: drop the in-memory PrepareEpochFence and adopt
        its bumped epoch, so the abort (and its markers) carry it (Kafka's endTransaction)."""
        self.pending = None
        self.value = dataclasses.replace(self.value, producer_epoch=fenced_epoch)
        self.last_producer_epoch = NO_EPOCH

    def complete(self, transit: Transit) -> None:
        """The transit's append is durable: it becomes the current value."""
        self.value = transit.value
        self.last_producer_epoch = transit.last_producer_epoch
        self.pending = None

    def abandon(self) -> None:
        """The transit's append failed: nothing changes but the pending mark."""
        self.pending = None
