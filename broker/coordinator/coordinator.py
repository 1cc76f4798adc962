"""``GroupCoordinator``: the one object the group request handlers talk to.

It is a facade (as Kafka's ``GroupCoordinator`` is) over three parts with one job each:
``GroupManager`` runs the rebalance protocol, ``OffsetManager`` keeps committed offsets and
``OffsetsTopic``/``GroupStore`` persist both in ``__consumer_offsets``. What needs more than
one part lives here: who may commit offsets for a group, listing, describing and deleting
groups, loading everything on start and the background task that expires sessions.

Concurrency: everything runs on the broker's event loop. Request flows never await between
reading and changing a group, so no locks are needed; the only awaits are the parked JoinGroup
and SyncGroup futures. Storage calls are synchronous and short, as the log contract promises.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

from kio.schema.errors import ErrorCode

from broker.background import FailureTracker, TaskFailure
from broker.coordinator._txn_offsets import MAX_METADATA_BYTES, TxnOffsetsMixin
from broker.coordinator.group import Group, GroupDescription, GroupState
from broker.coordinator.group_manager import GroupManager, JoinRequest
from broker.coordinator.group_store import GroupStore
from broker.coordinator.member import JoinResult, SyncResult
from broker.coordinator.offset_manager import OffsetManager, TopicPartition
from broker.coordinator.offsets_topic import TOPIC, OffsetsTopic, TxnMarkerSeen
from broker.coordinator.rebalance import GroupConfig
from broker.coordinator.records import GroupKey, OffsetValue
from broker.errors import BrokerError

if TYPE_CHECKING:
    from broker.config import BrokerConfig
    from broker.coordinator.offsets_topic import ReplicatedOffsets
    from broker.log.log_manager import LogManager

log = logging.getLogger(__name__)

EXPIRY_RETRY_MS = (60_000, 300_000, 600_000)


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class GroupCoordinator(TxnOffsetsMixin):
    """Consumer groups and committed offsets of this broker (it coordinates every group)."""

    def __init__(
        self,
        logs: LogManager,
        config: BrokerConfig,
        *,
        clock: Callable[[], int] = wall_clock_ms,
        tick_interval_ms: int = 100,
        replicated: ReplicatedOffsets | None = None,
    ) -> None:
        self._clock = clock
        self._tick_s = tick_interval_ms / 1000
        self.replicated = replicated
        self.topic = OffsetsTopic(
            logs, getattr(config, "offsets_topic_num_partitions", 1), replicated
        )
        self.store = GroupStore(self.topic, clock)
        self.offsets = OffsetManager(self.topic)
        self.groups = GroupManager(
            GroupConfig(
                min_session_timeout_ms=getattr(config, "group_min_session_timeout_ms", 6_000),
                max_session_timeout_ms=getattr(config, "group_max_session_timeout_ms", 1_800_000),
                initial_rebalance_delay_ms=getattr(
                    config, "group_initial_rebalance_delay_ms", 3_000
                ),
            ),
            self.store,
            clock,
        )
        self._retention_ms = getattr(config, "offsets_retention_minutes", 7 * 24 * 60) * 60_000
        self._retention_check_ms = getattr(config, "offsets_retention_check_interval_ms", 600_000)
        self._next_retention_check = clock() + self._retention_check_ms
        self._task: asyncio.Task[None] | None = None
        self._expiry_failures = FailureTracker(
            "offset expiry", EXPIRY_RETRY_MS, logger=log, unit="group"
        )
        self.active = False

    async def start(self) -> None:
        """Creates or replays ``__consumer_offsets``, then starts expiring sessions.

        Cluster mode (``replicated``): nothing is loaded here; each offsets partition is loaded
        when this broker becomes its leader (:meth:`load_partition`) and dropped when it stops
        leading it (:meth:`unload_partition`), so a group lives on exactly one broker.
        """
        if self.replicated is None:
            self.topic.open()
            self.load()
        self.active = True
        self._task = asyncio.get_running_loop().create_task(self._run(), name="group-expiry")

    def owns(self, group_id: str) -> bool:
        """Whether this broker coordinates the group (always, on a single node)."""
        if self.replicated is None:
            return True
        if self.topic.partitions == 0:
            self.topic.partitions = self.replicated.partition_count()
            if self.topic.partitions == 0:
                return False
        return self.replicated.coordinates(self.topic.partition_for(group_id))

    def load_partition(self, partition: int) -> None:
        """Cluster mode: this broker now leads offsets partition ``partition``."""
        self.topic.partitions = max(self.topic.partitions, self.replicated_count())
        self.load([partition])

    def replicated_count(self) -> int:
        return self.replicated.partition_count() if self.replicated is not None else 0

    def unload_partition(self, partition: int) -> None:
        """Cluster mode: another broker leads ``partition`` now; forget its groups."""
        dropped = 0
        for group_id in list(self.groups.groups):
            if self.topic.partition_for(group_id) != partition:
                continue
            group = self.groups.groups.pop(group_id)
            for member in group.members.values():
                member.complete_join(JoinResult(ErrorCode.not_coordinator, member.member_id))
                member.complete_sync(SyncResult(ErrorCode.not_coordinator))
            dropped += 1
        self.offsets.forget_groups(
            g for g in self.offsets.groups() if self.topic.partition_for(g) == partition
        )
        log.log(
            logging.INFO if dropped else logging.DEBUG,
            "unloaded %d groups of %s-%d", dropped, TOPIC, partition,
        )  # fmt: skip

    async def wait_durable(self, group_id: str) -> ErrorCode:
        """Cluster mode: waits until the group's last write is replicated (acks=all)."""
        if self.replicated is None:
            return ErrorCode.none
        return await self.replicated.wait(self.topic.partition_for(group_id))

    def load(self, partitions: Iterable[int] | None = None) -> None:
        """Replays the topic: offsets into the OffsetManager, newest metadata per group."""
        metadata: dict[str, bytes | None] = {}
        for item in self.topic.replay(partitions):
            if isinstance(item, TxnMarkerSeen):
                self.offsets.complete_transaction(item.producer_id, item.partition, item.commit)
            elif isinstance(item.key, GroupKey):
                metadata[item.key.group] = item.value
            else:
                self.offsets.load_record(item.key, item.value, item.offset, item.producer_id)
        for group_id, raw in metadata.items():
            if raw is None:
                continue
            try:
                self.groups.groups[group_id] = self.store.restore(group_id, raw)
            except (ValueError, UnicodeDecodeError) as exc:
                log.warning(
                    "group %s: unreadable group metadata, starting empty: %s", group_id, exc
                )
        for group_id in self.offsets.groups():
            self.groups.get_or_create(group_id)
        # Cluster mode loads one partition at a time as this broker becomes its leader: a
        # line for each partition that held no group would be 50 lines of nothing.
        log.log(
            logging.INFO if metadata or partitions is None else logging.DEBUG,
            "loaded %d groups from %d partitions of %s",
            len(self.groups.groups),
            self.topic.partitions,
            TOPIC,
        )

    async def stop(self) -> None:
        """Stops the expiry task and answers parked requests with NOT_COORDINATOR."""
        self.active = False
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for group in self.groups.groups.values():
            for member in group.members.values():
                member.complete_join(JoinResult(ErrorCode.not_coordinator, member.member_id))
                member.complete_sync(SyncResult(ErrorCode.not_coordinator))

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._tick_s)
            try:
                self.tick()
            except Exception:
                log.exception("group expiry check failed")

    def tick(self) -> None:
        """Expires sessions, rebalances and old offsets; forgets groups that hold nothing."""
        self.groups.tick()
        now = self._clock()
        if now >= self._next_retention_check:
            self._next_retention_check = now + self._retention_check_ms
            self._expire_offsets(now)
        for group_id, group in list(self.groups.groups.items()):
            if (
                group.state is GroupState.EMPTY
                and group.is_empty
                and group.generation == 0
                and not self.offsets.has_offsets(group_id)
            ):
                del self.groups.groups[group_id]

    def _expire_offsets(self, now: int) -> None:
        """Drops expired offsets of empty groups, then empty groups left with no offsets.

        Group by group: one whose expiry fails is logged, retried later and listed by
        ``background_failures``; the others are still expired.
        """
        tracker = self._expiry_failures
        for group_id, group in list(self.groups.groups.items()):
            if group.state is not GroupState.EMPTY or not group.is_empty:
                continue
            tracker.run(group_id, now, partial(self._expire_group, group, now))
        tracker.retain(self.groups.groups)

    def _expire_group(self, group: Group, now: int) -> int:
        since = group.state_timestamp if group.protocol_type else None
        removed = self.offsets.expire(group.group_id, now, self._retention_ms, since)
        if not self.offsets.has_offsets(group.group_id):
            self._delete(group)
        return removed

    def background_failures(self) -> list[TaskFailure]:
        """Groups whose session or offset expiry is failing now (for metrics/status)."""
        return [*self.groups.tick_failures.failures(), *self._expiry_failures.failures()]

    # -- membership ----------------------------------------------------------------------

    async def join_group(self, request: JoinRequest) -> JoinResult:
        if not self.active:
            return JoinResult(ErrorCode.coordinator_not_available, request.member_id)
        if not self.owns(request.group_id):
            return JoinResult(ErrorCode.not_coordinator, request.member_id)
        return await self.groups.join(request)

    async def sync_group(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        group_instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
        assignments: dict[str, bytes],
    ) -> SyncResult:
        if not self.active:
            return SyncResult(ErrorCode.coordinator_not_available)
        if not self.owns(group_id):
            return SyncResult(ErrorCode.not_coordinator)
        return await self.groups.sync(
            group_id,
            generation,
            member_id,
            group_instance_id,
            protocol_type,
            protocol_name,
            assignments,
        )

    def heartbeat(
        self, group_id: str, member_id: str, group_instance_id: str | None, generation: int
    ) -> ErrorCode:
        if not self.active:
            return ErrorCode.coordinator_not_available
        if not self.owns(group_id):
            return ErrorCode.not_coordinator
        return self.groups.heartbeat(group_id, member_id, group_instance_id, generation)

    def leave_group(
        self, group_id: str, members: Sequence[tuple[str, str | None]]
    ) -> list[ErrorCode]:
        if not self.active:
            return [ErrorCode.coordinator_not_available] * len(members)
        if not self.owns(group_id):
            return [ErrorCode.not_coordinator] * len(members)
        return self.groups.leave(group_id, members)

    # -- offsets -------------------------------------------------------------------------

    def _validate_commit(
        self, group_id: str, generation: int, member_id: str, instance_id: str | None
    ) -> ErrorCode:
        if not group_id:
            return ErrorCode.invalid_group_id
        group = self.groups.groups.get(group_id)
        if group is None:
            admin = generation < 0 and not member_id and not instance_id
            return ErrorCode.none if admin else ErrorCode.illegal_generation
        error = group.validate_offset_commit(generation, member_id, instance_id)
        if error is ErrorCode.none:
            self.groups.touch(group, member_id)
        return error

    def commit_offsets(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        group_instance_id: str | None,
        offsets: Mapping[TopicPartition, OffsetValue],
    ) -> dict[TopicPartition, ErrorCode]:
        """Validates and durably stores a commit; one error code per partition."""
        if not self.active:
            return dict.fromkeys(offsets, ErrorCode.coordinator_not_available)
        if not self.owns(group_id):
            return dict.fromkeys(offsets, ErrorCode.not_coordinator)
        error = self._validate_commit(group_id, generation, member_id, group_instance_id)
        if error is not ErrorCode.none:
            return dict.fromkeys(offsets, error)
        results = {
            tp: ErrorCode.offset_metadata_too_large
            for tp, v in offsets.items()
            if len(v.metadata.encode()) > MAX_METADATA_BYTES
        }
        accepted = {tp: v for tp, v in offsets.items() if tp not in results}
        try:
            self.offsets.commit(group_id, accepted)
        except BrokerError as exc:
            log.error("group %s: commit failed: %s", group_id, exc)
            return dict.fromkeys(offsets, ErrorCode.coordinator_not_available)
        self.groups.get_or_create(group_id)
        results.update(dict.fromkeys(accepted, ErrorCode.none))
        return results

    def fetch_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None
    ) -> tuple[ErrorCode, dict[TopicPartition, OffsetValue | None]]:
        if not self.active:
            return ErrorCode.coordinator_not_available, {}
        if not self.owns(group_id):
            return ErrorCode.not_coordinator, {}
        return ErrorCode.none, self.offsets.fetch(group_id, partitions)

    def delete_offsets(
        self, group_id: str, partitions: Sequence[TopicPartition]
    ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """OffsetDelete: refused for topics an active consumer group still subscribes to."""
        group = self.groups.groups.get(group_id)
        if not self.active:
            return ErrorCode.coordinator_not_available, {}
        if not self.owns(group_id):
            return ErrorCode.not_coordinator, {}
        if group is None or group.state is GroupState.DEAD:
            return ErrorCode.group_id_not_found, {}
        subscribed: set[str] = set()
        if group.state is not GroupState.EMPTY:
            topics = group.subscribed_topics()
            if topics is None:
                return ErrorCode.non_empty_group, {}
            subscribed = topics
        results = {
            tp: ErrorCode.group_subscribed_to_topic if tp[0] in subscribed else ErrorCode.none
            for tp in partitions
        }
        try:
            self.offsets.delete(group_id, [tp for tp, e in results.items() if e is ErrorCode.none])
        except BrokerError as exc:
            log.error("group %s: deleting offsets failed: %s", group_id, exc)
            return ErrorCode.coordinator_not_available, {}
        return ErrorCode.none, results

    # -- admin ---------------------------------------------------------------------------

    def list_groups(
        self, states: Iterable[str] = (), types: Iterable[str] = ()
    ) -> list[tuple[str, str, str]]:
        """(group id, protocol type, state) of each group passing the (case-blind) filters."""
        wanted_states = {s.lower() for s in states}
        wanted_types = {t.lower() for t in types}
        if wanted_types and "classic" not in wanted_types:
            return []
        return [
            (g.group_id, g.protocol_type or "", g.state.value)
            for g in self.groups.groups.values()
            if (not wanted_states or g.state.value.lower() in wanted_states)
            and self.owns(g.group_id)
        ]

    def describe_group(self, group_id: str) -> GroupDescription | None:
        """Members with metadata and assignment, which Kafka reports only once Stable."""
        group = self.groups.groups.get(group_id)
        return group.describe() if group is not None else None

    def delete_groups(self, group_ids: Iterable[str]) -> dict[str, ErrorCode]:
        """Deletes empty groups with their offsets (tombstones); NON_EMPTY_GROUP otherwise."""
        results: dict[str, ErrorCode] = {}
        for group_id in group_ids:
            group = self.groups.groups.get(group_id)
            if not self.active:
                results[group_id] = ErrorCode.coordinator_not_available
            elif not self.owns(group_id):
                results[group_id] = ErrorCode.not_coordinator
            elif group is None or group.state is GroupState.DEAD:
                results[group_id] = ErrorCode.group_id_not_found
            elif group.state is not GroupState.EMPTY or not group.is_empty:
                results[group_id] = ErrorCode.non_empty_group
            else:
                results[group_id] = self._delete(group)
        return results

    def _delete(self, group: Group) -> ErrorCode:
        try:
            self.offsets.delete(group.group_id)
            self.store.delete(group.group_id)
        except BrokerError as exc:
            log.error("group %s: delete failed: %s", group.group_id, exc)
            return ErrorCode.coordinator_not_available
        group.transition(GroupState.DEAD, self._clock())
        del self.groups.groups[group.group_id]
        log.info("group %s: deleted", group.group_id)
        return ErrorCode.none
