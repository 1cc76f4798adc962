"""ReplicaFetcher: one per leader broker, pulling every partition this broker follows from it.

It runs as one asyncio task with its own connection to the leader (Kafka's
``ReplicaFetcherThread`` with ``num.replica.fetchers=1``) and loops:

1. partitions that just started following this leader first ask it, with OffsetForLeaderEpoch
   (API 23), where their latest leader epoch ends in the leader's log, and truncate any
   divergent tail (KIP-101/KIP-279; see ``broker/log/leader_epoch.py``);
2. one Fetch (v12, ``replica_id`` = this broker's id) for all the others from their log end
   offset, long-polling ``replica.fetch.wait.max.ms``; the leader learns each follower's
   position from exactly these fetch offsets;
3. the returned batches are appended verbatim (``append_as_follower``) and the follower's high
   watermark becomes min(leader's high watermark, own log end).

A partition added while a long poll is in flight without it drops that poll (closes the
connection) and fetches again at once, and a poll sent while some partitions are parked lasts
no longer than their parking, so a partition never waits out ``replica.fetch.wait.max.ms`` on
a poll for other partitions (Kafka's fetcher does wait).
A partition whose leader answers NOT_LEADER_OR_FOLLOWER or a fenced/unknown epoch is parked
for a moment: the new partition state from ZooKeeper will move it to the right fetcher.
A partition removed or re-added while a request is in flight is recognised by its
``FetchState`` identity and the stale answer is dropped. Connection errors close the
connection and retry with a short backoff, forever: the controller, not the follower, decides
when a leader is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12 import request as fetch_req
from kio.schema.offset_for_leader_epoch.v4 import request as olep_req

from broker.cluster.peer_client import PeerConnection
from broker.errors import BrokerError
from broker.log.leader_epoch import UNDEFINED_EPOCH
from broker.protocol._entities import build

if TYPE_CHECKING:
    from broker.cluster.replica_manager import ReplicaManager

log = logging.getLogger(__name__)

FETCH_VERSION = 12
OLEP_VERSION = 4
_RETRY_S = 0.2
_PARK_S = 0.3
_PARK_ERRORS = {
    ErrorCode.not_leader_or_follower,
    ErrorCode.fenced_leader_epoch,
    ErrorCode.unknown_leader_epoch,
    ErrorCode.unknown_topic_or_partition,
    ErrorCode.leader_not_available,
}

TopicPartition = tuple[str, int]


@dataclass
class FetchState:
    epoch: int
    truncating: bool = True
    parked_until: float = 0.0


class ReplicaFetcher:
    def __init__(self, manager: ReplicaManager, source: int) -> None:
        self.manager = manager
        self.source = source
        self.partitions: dict[TopicPartition, FetchState] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._conn: PeerConnection | None = None
        self._failing = False  # log a failing leader once, not every retry
        self._inflight: frozenset[TopicPartition] | None = None  # the fetch being awaited
        self._interrupted = False

    def add(self, tp: TopicPartition, epoch: int) -> None:
        self.partitions[tp] = FetchState(epoch)
        self._wake.set()
        if self._inflight is not None and tp not in self._inflight:
            # The long poll in flight does not carry tp; it may stay parked at the leader for
            # replica.fetch.wait.max.ms (nothing appended to its partitions), and tp's records
            # would wait as long, with every acks=all produce on tp. Drop it and fetch anew.
            self._interrupted = True
            self._drop_connection()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name=f"replica-fetcher-{self.source}"
            )

    def remove(self, tp: TopicPartition) -> None:
        self.partitions.pop(tp, None)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    async def _run(self) -> None:
        while True:
            if not self.partitions:
                self._wake.clear()
                await self._wake.wait()
                continue
            try:
                if self._conn is None:
                    self._conn = await self._connect()
                    if self._conn is None:
                        await asyncio.sleep(_RETRY_S)
                        continue
                await self._truncate_pending(self._conn)
                fetched = await self._fetch_once(self._conn)
                self._failing = False
                if not fetched:
                    self._wake.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), _PARK_S)
            except asyncio.CancelledError:
                raise
            except (OSError, ConnectionError, TimeoutError, asyncio.IncompleteReadError) as exc:
                if self._interrupted:  # add() dropped the connection on purpose
                    self._interrupted = False
                    self._drop_connection()
                    continue
                level = logging.DEBUG if self._failing else logging.INFO
                log.log(
                    level, "replica fetch from broker %d failed: %r; retrying", self.source, exc
                )
                self._failing = True
                self._drop_connection()
                await asyncio.sleep(_RETRY_S)
            except Exception:
                log.exception("replica fetcher for broker %d failed", self.source)
                self._drop_connection()
                await asyncio.sleep(1.0)

    def _drop_connection(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    async def _connect(self) -> PeerConnection | None:
        info = self.manager.cache.brokers.get(self.source)
        if info is None:
            return None
        conn = PeerConnection(
            info.host,
            info.port,
            f"broker-{self.manager.broker_id}-fetcher-{self.source}",
            self.manager.peer_security,
        )
        await conn.connect(self.manager.request_timeout_s)
        return conn

    # ------------------------------------------------------------------ truncation

    async def _truncate_pending(self, conn: PeerConnection) -> None:
        now = time.monotonic()
        pending = {
            tp: st for tp, st in self.partitions.items() if st.truncating and st.parked_until <= now
        }
        if not pending:
            return
        by_topic: dict[str, list[Any]] = {}
        for (topic, partition), st in pending.items():
            plog = self.manager.local_log(topic, partition)
            if plog is None:
                continue
            by_topic.setdefault(topic, []).append(
                build(
                    olep_req.OffsetForLeaderPartition,
                    partition=partition,
                    current_leader_epoch=st.epoch,
                    leader_epoch=plog.leader_epochs.latest_epoch,
                )
            )
        request = build(
            olep_req.OffsetForLeaderEpochRequest,
            replica_id=self.manager.broker_id,
            topics=tuple(
                build(olep_req.OffsetForLeaderTopic, topic=t, partitions=tuple(ps))
                for t, ps in by_topic.items()
            ),
        )
        response = await conn.request(23, OLEP_VERSION, request, self.manager.request_timeout_s)
        for topic in response.topics:
            for result in topic.partitions:
                tp = (topic.topic, result.partition)
                current = self.partitions.get(tp)
                if current is None or current is not pending.get(tp):
                    continue
                if result.error_code != ErrorCode.none:
                    current.parked_until = time.monotonic() + _PARK_S
                    continue
                self._truncate(tp, result.leader_epoch, result.end_offset)
                current.truncating = False

    def _truncate(self, tp: TopicPartition, leader_epoch: int, leader_end: int) -> None:
        plog = self.manager.local_log(*tp)
        if plog is None:
            return
        leo = plog.log_end_offset
        if leader_epoch == UNDEFINED_EPOCH or leader_end < 0:
            target = min(plog.high_watermark, leo) if plog.leader_epochs.entries else leo
        else:
            own_epoch, own_end = plog.leader_epochs.end_offset_for(leader_epoch, leo)
            target = min(leader_end, own_end if own_epoch == leader_epoch else leo)
        if target < leo:
            log.info(
                "[%s-%d] truncating divergent tail %d..%d (leader epoch %d ends at %d)",
                tp[0], tp[1], target, leo, leader_epoch, leader_end,
            )  # fmt: skip
            plog.truncate_replica_to(target)

    # ------------------------------------------------------------------ fetch

    async def _fetch_once(self, conn: PeerConnection) -> bool:
        """One Fetch round trip; False if no partition was ready to fetch."""
        now = time.monotonic()
        sent: dict[TopicPartition, FetchState] = {}
        by_topic: dict[str, list[Any]] = {}
        mgr = self.manager
        wait_ms = mgr.config.replica_fetch_wait_max_ms
        for tp, st in self.partitions.items():
            if st.truncating or st.parked_until > now:
                # Never long-poll past the moment a parked partition may be fetched again: a
                # partition parked while its new leader caught up would otherwise wait out
                # the whole poll on the others' behalf (and its acks=all produces with it).
                if st.parked_until > now:
                    wait_ms = min(wait_ms, int((st.parked_until - now) * 1000) + 1)
                continue
            plog = mgr.local_log(*tp)
            if plog is None:
                continue
            sent[tp] = st
            by_topic.setdefault(tp[0], []).append(
                build(
                    fetch_req.FetchPartition,
                    partition=tp[1],
                    current_leader_epoch=st.epoch,
                    fetch_offset=plog.log_end_offset,
                    last_fetched_epoch=-1,
                    log_start_offset=plog.log_start_offset,
                    partition_max_bytes=mgr.config.replica_fetch_max_bytes,
                )
            )
        if not sent:
            return False
        request = build(
            fetch_req.FetchRequest,
            replica_id=mgr.broker_id,
            max_wait=timedelta(milliseconds=wait_ms),
            min_bytes=1,
            max_bytes=mgr.config.replica_fetch_response_max_bytes,
            isolation_level=0,
            session_id=0,
            session_epoch=-1,
            topics=tuple(
                build(fetch_req.FetchTopic, topic=t, partitions=tuple(ps))
                for t, ps in by_topic.items()
            ),
            forgotten_topics_data=(),
            rack_id="",
        )
        timeout = mgr.request_timeout_s + mgr.config.replica_fetch_wait_max_ms / 1000
        self._inflight = frozenset(sent)
        try:
            response = await conn.request(1, FETCH_VERSION, request, timeout)
        finally:
            self._inflight = None
        if response.error_code != ErrorCode.none:
            raise ConnectionError(f"fetch failed: {response.error_code.name}")
        for topic in response.responses:
            for pdata in topic.partitions:
                tp = (topic.topic, pdata.partition_index)
                current = self.partitions.get(tp)
                if current is None or current is not sent.get(tp):
                    continue  # removed or re-added meanwhile: the answer is stale
                self._apply(tp, current, pdata)
        return True

    def _apply(self, tp: TopicPartition, st: FetchState, pdata: Any) -> None:
        plog = self.manager.local_log(*tp)
        if plog is None:
            return
        code = pdata.error_code
        if code == ErrorCode.none:
            records = pdata.records
            try:
                if records:
                    plog.append_as_follower(records)
            except BrokerError as exc:
                log.error("[%s-%d] replica append failed: %s", tp[0], tp[1], exc)
                st.truncating = True
                st.parked_until = time.monotonic() + _PARK_S
                return
            hw = min(pdata.high_watermark, plog.log_end_offset)
            if hw > plog.high_watermark:
                plog.set_high_watermark(hw)
        elif code == ErrorCode.offset_out_of_range:
            leo = plog.log_end_offset
            if leo < pdata.log_start_offset:
                log.info("[%s-%d] behind the leader's log start %d: restarting there",
                         tp[0], tp[1], pdata.log_start_offset)  # fmt: skip
                plog.truncate_fully_and_start_at(pdata.log_start_offset)
            elif pdata.high_watermark >= 0 and leo > pdata.high_watermark:
                plog.truncate_replica_to(pdata.high_watermark)
            else:
                st.truncating = True
        elif code in _PARK_ERRORS:
            st.parked_until = time.monotonic() + _PARK_S
        else:
            log.warning("[%s-%d] replica fetch error %s", tp[0], tp[1], code.name)
            st.parked_until = time.monotonic() + _PARK_S
