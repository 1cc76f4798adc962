"""Partition: the replication state of one local replica, as leader or follower.

Leader side (Kafka's ``Partition``): the ISR as last written to ZooKeeper, each follower's log
end offset (its latest fetch offset) and when it was last caught up, the high watermark (the
smallest log end offset of the ISR, never moving back) and the produce requests with acks=all
waiting for it (:meth:`wait_for_hw`).

ISR changes are written by the leader to the partition's state znode with the znode version it
last saw; while a change is in flight the high watermark counts the union of the old and new ISR
("maximal ISR", KIP-497), so no record is reported committed that a member of either set lacks.

Follower side: only the leader's id and epoch; the fetcher does the work.

Loop-only, like everything in ``broker.cluster``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from kio.schema.errors import ErrorCode

from broker.cluster.znodes import NO_LEADER, PartitionState
from broker.log.partition_log import PartitionLog

log = logging.getLogger(__name__)


@dataclass
class FollowerState:
    leo: int = -1
    last_caught_up_ms: int = 0
    last_fetch_leader_leo: int = -1
    last_fetch_ms: int = 0


class Partition:
    def __init__(self, topic: str, partition: int, plog: PartitionLog, broker_id: int) -> None:
        self.topic = topic
        self.partition = partition
        self.log = plog
        self.broker_id = broker_id
        self.ident = f"[{topic}-{partition}]"
        self.leader = NO_LEADER
        self.leader_epoch = -1
        self.isr: tuple[int, ...] = ()
        self.zk_version = -1
        self.controller_epoch = 0
        self.replicas: tuple[int, ...] = ()
        self.followers: dict[int, FollowerState] = {}
        self.pending_isr: tuple[int, ...] | None = None
        self._waiters: list[tuple[int, asyncio.Future[ErrorCode]]] = []
        self.on_high_watermark: Callable[[], None] | None = None
        """Called when the HW moves, before the acks=all waiters are woken: the replica
        manager wakes the consumers' parked fetches with it, so the records reach consumers
        before the loop spends time on the producers' responses."""
        plog.hw_follows_leo = False

    @property
    def is_leader(self) -> bool:
        return self.leader == self.broker_id

    def state(self, isr: tuple[int, ...]) -> PartitionState:
        return PartitionState(
            self.leader, self.leader_epoch, isr, self.controller_epoch, self.zk_version
        )

    # ------------------------------------------------------------ role changes

    def become_leader(self, state: PartitionState, replicas: tuple[int, ...], now_ms: int) -> None:
        """Takes leadership at ``state.leader_epoch``: the epoch starts at our log end."""
        self._apply(state, replicas)
        self.log.leader_epochs.assign(state.leader_epoch, self.log.log_end_offset)
        self.followers = {
            r: FollowerState(last_caught_up_ms=now_ms if r in state.isr else 0)
            for r in replicas
            if r != self.broker_id
        }
        # DEBUG: the controller logs each decision once (broker.cluster.controller); a line
        # per partition on every broker would be 150 for one 50-partition topic.
        log.debug(
            "%s became leader at epoch %d, isr %s, log end %d, high watermark %d",
            self.ident, state.leader_epoch, list(state.isr), self.log.log_end_offset,
            self.log.high_watermark,
        )  # fmt: skip
        self.maybe_advance_hw()

    def become_follower(self, state: PartitionState, replicas: tuple[int, ...]) -> None:
        was_leader = self.is_leader
        self._apply(state, replicas)
        self.followers = {}
        self.fail_waiters(ErrorCode.not_leader_or_follower)
        log.debug(
            "%s following broker %d at epoch %d%s", self.ident, state.leader, state.leader_epoch,
            " (was leader)" if was_leader else "",
        )  # fmt: skip

    def update_isr_from_zk(self, state: PartitionState, replicas: tuple[int, ...]) -> None:
        """Same leader and epoch, new ISR or replicas (controller shrink, reassignment)."""
        if state.zk_version < self.zk_version:
            return  # an older event than the write we already applied
        self.isr, self.zk_version = state.isr, state.zk_version
        self.controller_epoch = state.controller_epoch
        self.replicas = replicas
        for r in replicas:
            if r != self.broker_id and r not in self.followers:
                self.followers[r] = FollowerState()
        self.maybe_advance_hw()

    def _apply(self, state: PartitionState, replicas: tuple[int, ...]) -> None:
        self.leader, self.leader_epoch = state.leader, state.leader_epoch
        self.isr, self.zk_version = state.isr, state.zk_version
        self.controller_epoch = state.controller_epoch
        self.replicas = replicas
        self.pending_isr = None

    # ------------------------------------------------------------ leader: followers and HW

    def update_follower(self, replica: int, fetch_offset: int, now_ms: int) -> None:
        """A follower fetched from ``fetch_offset``: that is its log end offset now."""
        f = self.followers.get(replica)
        if f is None:
            return
        leo = self.log.log_end_offset
        if fetch_offset >= leo:
            f.last_caught_up_ms = now_ms
        elif fetch_offset >= f.last_fetch_leader_leo:
            f.last_caught_up_ms = max(f.last_caught_up_ms, f.last_fetch_ms)
        f.leo, f.last_fetch_leader_leo, f.last_fetch_ms = fetch_offset, leo, now_ms

    def expandable(self, replica: int) -> bool:
        """A follower out of the ISR that caught up to the HW within this leader's epoch."""
        f = self.followers.get(replica)
        if f is None or replica in self.isr or self.pending_isr is not None:
            return False
        epoch_start = self.log.leader_epochs.start_offset_of(self.leader_epoch)
        return f.leo >= self.log.high_watermark and f.leo >= epoch_start

    def lagging(self, now_ms: int, max_lag_ms: int) -> list[int]:
        """ISR followers not caught up within ``max_lag_ms`` (``replica.lag.time.max.ms``)."""
        return [
            r
            for r in self.isr
            if r != self.broker_id
            and (f := self.followers.get(r)) is not None
            and now_ms - f.last_caught_up_ms > max_lag_ms
        ]

    def maximal_isr(self) -> set[int]:
        return set(self.isr) | set(self.pending_isr or ())

    def maybe_advance_hw(self) -> bool:
        """Moves the HW to the smallest log end offset of the (maximal) ISR; True if it moved."""
        if not self.is_leader:
            return False
        hw = self.log.log_end_offset
        for r in self.maximal_isr():
            if r == self.broker_id:
                continue
            f = self.followers.get(r)
            hw = min(hw, f.leo if f is not None else -1)
        if hw > self.log.high_watermark:
            self.log.set_high_watermark(hw)
            if self.on_high_watermark is not None:
                self.on_high_watermark()
            self._wake(hw)
            return True
        return False

    # ------------------------------------------------------------ delayed produce

    def wait_for_hw(self, offset: int) -> asyncio.Future[ErrorCode]:
        """A future resolved with NONE once the HW reaches ``offset``, or with an error when
        this broker stops leading (the caller applies the request timeout)."""
        fut: asyncio.Future[ErrorCode] = asyncio.get_running_loop().create_future()
        if self.log.high_watermark >= offset:
            fut.set_result(ErrorCode.none)
        elif not self.is_leader:
            fut.set_result(ErrorCode.not_leader_or_follower)
        else:
            self._waiters.append((offset, fut))
        return fut

    def _wake(self, hw: int) -> None:
        if not self._waiters:
            return
        keep = []
        for offset, fut in self._waiters:
            if fut.done():
                continue
            if offset <= hw:
                fut.set_result(ErrorCode.none)
            else:
                keep.append((offset, fut))
        self._waiters = keep

    def fail_waiters(self, code: ErrorCode) -> None:
        waiters, self._waiters = self._waiters, []
        for _, fut in waiters:
            if not fut.done():
                fut.set_result(code)
