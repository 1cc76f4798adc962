"""ReplicaManager: this broker's replicas, their roles, and the leader-side replication duties.

It turns partition-state znode changes (``on_state``) into role changes — Kafka's LeaderAndIsr
handling, driven here by ZooKeeper watches instead of controller requests (docs/cluster.md):

- ``leader == me`` at a new epoch: become leader (the epoch starts at our log end), stop
  fetching the partition;
- another live leader: become follower, (re)start fetching from it, beginning with the
  OffsetForLeaderEpoch truncation step; waiting acks=all produces get NOT_LEADER_OR_FOLLOWER;
- same leader and epoch: only the ISR changed (our own write coming back, or the controller
  removing a dead broker).

Leader duties: record follower fetch positions (``on_follower_fetch``), expand the ISR when a
follower catches up, shrink it every ``replica.lag.time.max.ms / 2`` when one falls behind, and
write both to ZooKeeper with the znode version (a BadVersion means the controller changed the
partition: re-read and re-apply). The high watermarks go to ``replication-offset-checkpoint``
periodically and on stop, and are restored at start.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kazoo.exceptions import BadVersionError, NoNodeError
from kio.schema.errors import ErrorCode

from broker.cluster.fetcher import ReplicaFetcher
from broker.cluster.metadata_cache import MetadataCache, TopicPartition
from broker.cluster.partition import Partition
from broker.cluster.znodes import NO_LEADER, PartitionState, partition_state_path
from broker.errors import (
    FencedLeaderEpochError,
    NotEnoughReplicasError,
    NotLeaderOrFollowerError,
    UnknownLeaderEpochError,
    UnknownTopicOrPartitionError,
)
from broker.log.checkpoints import HW_CHECKPOINT_FILE, read_checkpoint, write_checkpoint
from broker.security.inter_broker import PLAINTEXT, PeerSecurity

if TYPE_CHECKING:
    from broker.cluster.zk_client import ZkClient
    from broker.config import BrokerConfig
    from broker.log.partition_log import AppendInfo, PartitionLog
    from broker.protocol.notifier import AppendNotifier

log = logging.getLogger(__name__)


async def wait_replicated(p: Partition, offset: int, timeout_s: float) -> ErrorCode:
    """acks=all: waits until the ISR has everything before ``offset`` (Kafka's delayed
    produce): NONE, REQUEST_TIMED_OUT, NOT_LEADER_OR_FOLLOWER (leadership moved) or
    NOT_ENOUGH_REPLICAS_AFTER_APPEND (the ISR shrank below min.insync.replicas meanwhile)."""
    fut = p.wait_for_hw(offset)
    if not fut.done():
        # A timer instead of asyncio.wait_for: this runs once per acks=all request, and
        # wait_for's extra task and cancellation cost showed at 10k requests/s.
        timer = asyncio.get_running_loop().call_later(
            timeout_s, _expire, fut, ErrorCode.request_timed_out
        )
        try:
            code = await fut
        finally:
            timer.cancel()
    else:
        code = fut.result()
    if code == ErrorCode.none and len(p.isr) < p.log.config.min_insync_replicas:
        return ErrorCode.not_enough_replicas_after_append
    return code


def _expire(fut: asyncio.Future[ErrorCode], code: ErrorCode) -> None:
    if not fut.done():
        fut.set_result(code)


def monotonic_ms() -> int:
    return int(time.monotonic() * 1000)


class ReplicaManager:
    def __init__(
        self,
        config: BrokerConfig,
        cache: MetadataCache,
        logs: Any,
        zk: ZkClient,
        notifier: AppendNotifier,
        peer_security: PeerSecurity = PLAINTEXT,
    ) -> None:
        self.config = config
        self.peer_security = peer_security
        self.broker_id = config.node_id
        self.cache = cache
        self.logs = logs
        self.zk = zk
        self.notifier = notifier
        self.partitions: dict[TopicPartition, Partition] = {}
        self.fetchers: dict[int, ReplicaFetcher] = {}
        self.request_timeout_s = config.request_timeout_ms / 1000
        self._checkpoint_path = config.data_dir / HW_CHECKPOINT_FILE
        self._saved_hw = read_checkpoint(self._checkpoint_path)
        self._tasks: list[asyncio.Task[None]] = []
        self._isr_writes: set[asyncio.Task[None]] = set()
        self.isr_shrinks = 0
        self.isr_expands = 0
        """ISR changes this broker wrote as leader (Kafka's IsrShrinksPerSec/IsrExpandsPerSec)."""
        self.leadership_listener: Callable[[TopicPartition, bool], None] | None = None
        """Told when this broker starts (True) or stops (False) leading a partition; the
        group coordinator loads and unloads ``__consumer_offsets`` partitions with it."""

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._isr_shrink_loop(), name="isr-shrink"),
            loop.create_task(self._checkpoint_loop(), name="hw-checkpoint"),
        ]

    async def stop(self) -> None:
        for task in [*self._tasks, *self._isr_writes]:
            task.cancel()
        for task in [*self._tasks, *self._isr_writes]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for fetcher in self.fetchers.values():
            await fetcher.stop()
        for p in self.partitions.values():
            p.fail_waiters(ErrorCode.not_leader_or_follower)
        self.checkpoint_hw()

    # ------------------------------------------------------------------ lookups

    def local_log(self, topic: str, partition: int) -> PartitionLog | None:
        try:
            plog: PartitionLog = self.logs.log(topic, partition)
            return plog
        except UnknownTopicOrPartitionError:
            return None

    def partition(self, topic: str, partition: int) -> Partition | None:
        return self.partitions.get((topic, partition))

    def leader_partition(self, topic: str, partition: int) -> Partition | None:
        p = self.partitions.get((topic, partition))
        return p if p is not None and p.is_leader else None

    # ------------------------------------------------------------------ state changes

    def on_state(self, tp: TopicPartition, state: PartitionState | None) -> None:
        """Applies the partition's newest state znode (None = deleted or not created yet)."""
        replicas = self.cache.replicas(*tp)
        if state is None or self.broker_id not in replicas:
            self.forget(tp)
            return
        plog = self.local_log(*tp)
        if plog is None:
            return  # the topic sync creates the log, then calls on_state again
        p = self.partitions.get(tp)
        if p is None:
            p = self.partitions[tp] = Partition(tp[0], tp[1], plog, self.broker_id)
            p.on_high_watermark = functools.partial(self.notifier.notify_high_watermark, *tp)
            saved = self._saved_hw.get(tp)
            plog.set_high_watermark(saved if saved is not None else 0)
        if state.leader == self.broker_id:
            if p.is_leader and p.leader_epoch == state.leader_epoch:
                p.update_isr_from_zk(state, replicas)
            else:
                self._stop_fetching(tp)
                p.become_leader(state, replicas, monotonic_ms())
                self._tell(tp, True)
            self.notifier.notify(*tp)
            return
        if p.leader == state.leader and p.leader_epoch == state.leader_epoch and not p.is_leader:
            p.replicas, p.isr, p.zk_version = replicas, state.isr, state.zk_version
            self._ensure_fetching(tp, state)
            return
        was_leader = p.is_leader
        p.become_follower(state, replicas)
        if was_leader:
            self._tell(tp, False)
        self.notifier.notify(*tp)
        self._stop_fetching(tp)
        if state.leader != NO_LEADER:
            self._ensure_fetching(tp, state)

    def _ensure_fetching(self, tp: TopicPartition, state: PartitionState) -> None:
        if state.leader == NO_LEADER:
            return
        fetcher = self.fetchers.get(state.leader)
        if fetcher is not None and tp in fetcher.partitions:
            return
        if fetcher is None:
            fetcher = self.fetchers[state.leader] = ReplicaFetcher(self, state.leader)
        fetcher.add(tp, state.leader_epoch)

    def _stop_fetching(self, tp: TopicPartition) -> None:
        for fetcher in self.fetchers.values():
            fetcher.remove(tp)

    def forget(self, tp: TopicPartition) -> None:
        """No longer a replica (deleted topic, reassigned away)."""
        self._stop_fetching(tp)
        p = self.partitions.pop(tp, None)
        if p is not None:
            was_leader = p.is_leader
            p.fail_waiters(ErrorCode.not_leader_or_follower)
            p.leader = NO_LEADER
            if was_leader:
                self._tell(tp, False)
            if tp[0] in self.cache.topics and self.broker_id not in self.cache.replicas(*tp):
                # reassigned away: free the space (the log restarts empty if it comes back)
                p.log.truncate_fully_and_start_at(0)
                log.info("%s no longer a replica here; local data removed", p.ident)

    def _tell(self, tp: TopicPartition, leading: bool) -> None:
        if self.leadership_listener is not None:
            try:
                self.leadership_listener(tp, leading)
            except Exception:
                log.exception("leadership listener failed for %s-%d", *tp)

    # ------------------------------------------------------------------ leader duties

    def on_follower_fetch(self, replica: int, topic: str, partition: int, offset: int) -> None:
        p = self.partitions.get((topic, partition))
        if p is None or not p.is_leader:
            return
        p.update_follower(replica, offset, monotonic_ms())
        if p.expandable(replica):
            self._write_isr(p, (*p.isr, replica))
        p.maybe_advance_hw()  # wakes the consumers (on_high_watermark), not the followers

    # ------------------------------------------------------------------ request paths

    def require_leader(self, topic: str, partition: int, current_epoch: int = -1) -> Partition:
        """The partition if this broker leads it (at ``current_epoch`` when one is given)."""
        p = self.partitions.get((topic, partition))
        if p is None or not p.is_leader:
            if topic not in self.cache.topics:
                raise UnknownTopicOrPartitionError(f"unknown topic partition {topic}-{partition}")
            raise NotLeaderOrFollowerError(
                f"broker {self.broker_id} does not lead {topic}-{partition}"
            )
        if current_epoch >= 0 and current_epoch != p.leader_epoch:
            if current_epoch < p.leader_epoch:
                raise FencedLeaderEpochError(f"epoch {current_epoch} < {p.leader_epoch}")
            raise UnknownLeaderEpochError(f"epoch {current_epoch} > {p.leader_epoch}")
        return p

    def append_as_leader(
        self, topic: str, partition: int, records: bytes, acks: int, now_ms: int
    ) -> tuple[AppendInfo, Partition]:
        """Appends a producer's batches at the current leader epoch (raises the error the
        producer must see: not leader, or too small an ISR for acks=all)."""
        p = self.require_leader(topic, partition)
        if acks == -1:
            minimum = p.log.config.min_insync_replicas
            if len(p.isr) < minimum:
                raise NotEnoughReplicasError(
                    f"{topic}-{partition} has {len(p.isr)} in-sync replica(s) "
                    f"{list(p.isr)}; min.insync.replicas={minimum}"
                )
        info = p.log.append(records, leader_epoch=p.leader_epoch, now_ms=now_ms)
        p.maybe_advance_hw()
        return info, p

    async def wait_replicated(self, p: Partition, offset: int, timeout_s: float) -> ErrorCode:
        return await wait_replicated(p, offset, timeout_s)

    def fetch_bound(
        self, topic: str, partition: int, replica_id: int, current_epoch: int, plog: PartitionLog
    ) -> int:
        """How far a fetch may read: the log end for a follower, the HW for a consumer."""
        self.require_leader(topic, partition, current_epoch)
        return plog.log_end_offset if replica_id >= 0 else plog.high_watermark

    async def _isr_shrink_loop(self) -> None:
        interval = max(self.config.replica_lag_time_max_ms / 2, 50) / 1000
        while True:
            await asyncio.sleep(interval)
            now = monotonic_ms()
            for p in list(self.partitions.values()):
                if not p.is_leader or p.pending_isr is not None:
                    continue
                lagging = p.lagging(now, self.config.replica_lag_time_max_ms)
                if lagging:
                    log.info("%s shrinking ISR: %s fell behind", p.ident, lagging)
                    self._write_isr(p, tuple(r for r in p.isr if r not in lagging))

    def _write_isr(self, p: Partition, new_isr: tuple[int, ...]) -> None:
        p.pending_isr = new_isr
        task = asyncio.get_running_loop().create_task(self._do_write_isr(p, new_isr))
        self._isr_writes.add(task)
        task.add_done_callback(self._isr_writes.discard)

    async def _do_write_isr(self, p: Partition, new_isr: tuple[int, ...]) -> None:
        tp = (p.topic, p.partition)
        path = partition_state_path(*tp)
        epoch = p.leader_epoch
        old_size = len(p.isr)  # before the write: its ZooKeeper watch may update p.isr first
        try:
            stat = await self.zk.call("set", path, p.state(new_isr).encode(), version=p.zk_version)
        except BadVersionError:
            log.info("%s ISR update lost a race with the controller; re-reading", p.ident)
            try:
                data, zstat = await self.zk.call("get", path)
            except NoNodeError:
                return
            p.pending_isr = None
            self.on_state(tp, PartitionState.decode(data, zstat.version))
            return
        except Exception as exc:
            log.warning("%s ISR update failed: %r", p.ident, exc)
            if p.pending_isr == new_isr:
                p.pending_isr = None
            return
        if p.is_leader and p.leader_epoch == epoch:
            p.pending_isr = None
            if len(new_isr) < old_size:
                self.isr_shrinks += 1
            elif len(new_isr) > old_size:
                self.isr_expands += 1
            if stat.version > p.zk_version:
                p.isr, p.zk_version = new_isr, stat.version
            log.info("%s ISR is now %s", p.ident, list(p.isr))
            if p.maybe_advance_hw():
                self.notifier.notify(*tp)

    # ------------------------------------------------------------------ checkpoints

    def checkpoint_hw(self) -> None:
        offsets = {tp: p.log.high_watermark for tp, p in self.partitions.items()}
        try:
            write_checkpoint(self._checkpoint_path, offsets)
            self._saved_hw.update(offsets)
        except OSError as exc:
            log.warning("could not write %s: %s", self._checkpoint_path, exc)

    async def _checkpoint_loop(self) -> None:
        interval = self.config.replica_high_watermark_checkpoint_interval_ms / 1000
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(interval)
            offsets = {tp: p.log.high_watermark for tp, p in self.partitions.items()}
            try:
                await loop.run_in_executor(None, write_checkpoint, self._checkpoint_path, offsets)
            except OSError as exc:
                log.warning("could not write %s: %s", self._checkpoint_path, exc)
