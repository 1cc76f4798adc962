"""The states of a transactional id (Kafka's ``TransactionState``) and the legal moves between
them; the byte values are what ``__transaction_state`` stores.

::

                 AddPartitions/AddOffsets               EndTxn(commit)
    Empty ─────────────────────────────► Ongoing ───────────────────► PrepareCommit
      ▲  ▲                                │  │  EndTxn(abort),            │ markers written
      │  │ InitProducerId (epoch + 1)     │  │  timeout, fencing          ▼
      │  └──────────── CompleteCommit ◄───┼──┼──────────────────────── (all partitions)
      │                CompleteAbort ◄────┘  └──► PrepareAbort ─ markers written ─┘
      └──── (expired transactional ids become Dead, a tombstone)

``PrepareEpochFence`` is never stored: it marks, in memory, an Ongoing transaction whose
producer is being fenced (its epoch bumped) before it is aborted.
"""

from __future__ import annotations

import enum


class TxnState(enum.Enum):
    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        """The name DescribeTransactions and ListTransactions report (``PrepareCommit``)."""
        return "".join(part.capitalize() for part in self.name.split("_"))

    @classmethod
    def by_kafka_name(cls, name: str) -> TxnState | None:
        for state in cls:
            if state.kafka_name.lower() == name.lower():
                return state
        return None

    @property
    def completed(self) -> bool:
        """No transaction is open: a new one may start, the id may expire."""
        return self in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)


VALID_PREVIOUS: dict[TxnState, frozenset[TxnState]] = {
    TxnState.EMPTY: frozenset({TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT}),
    TxnState.ONGOING: frozenset(
        {TxnState.ONGOING, TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT}
    ),
    TxnState.PREPARE_COMMIT: frozenset({TxnState.ONGOING}),
    TxnState.PREPARE_ABORT: frozenset({TxnState.ONGOING, TxnState.PREPARE_EPOCH_FENCE}),
    TxnState.COMPLETE_COMMIT: frozenset({TxnState.PREPARE_COMMIT}),
    TxnState.COMPLETE_ABORT: frozenset({TxnState.PREPARE_ABORT}),
    TxnState.DEAD: frozenset({TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT}),
    TxnState.PREPARE_EPOCH_FENCE: frozenset({TxnState.ONGOING}),
}


class IllegalTransition(RuntimeError):
    """A coordinator bug: a move the state machine forbids (never a client error)."""


def check_transition(current: TxnState, target: TxnState) -> None:
    if current not in VALID_PREVIOUS[target]:
        raise IllegalTransition(f"transaction state {current.kafka_name} -> {target.kafka_name}")
