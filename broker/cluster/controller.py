"""Controller: the one broker that decides partition leadership (Kafka's ZooKeeper-era design).

Election: every broker tries to create the ephemeral ``/controller`` znode; the one that
succeeds increments ``/controller_epoch`` and is the controller until its session ends, when
the node vanishes and the others try again (they watch it). Every write the controller makes is
a ZooKeeper transaction that also checks the ``/controller_epoch`` znode version it set, so a
controller that lost its session and has not noticed yet (a "zombie") can change nothing.

State machine: instead of Kafka's event-by-event partition and replica state machines, each
event (broker came or went, topic created or grown, deletion, controlled shutdown, preferred
election, periodic rebalance) triggers one *reconcile* pass that reads the cluster from
ZooKeeper and moves every partition to the state those facts call for. The per-partition rules
(docs/cluster.md has the full table):

- no state znode yet (new topic/partition): leader = first live replica in assignment order,
  ISR = live replicas, leader epoch 0  (NewPartition -> OnlinePartition);
- leader alive and not shutting down: drop dead or shutting-down followers from the ISR
  (same leader epoch); on a preferred election, move leadership to the first replica if it is
  alive and in the ISR (epoch + 1);
- leader dead or shutting down: new leader = first replica (assignment order) in ISR that is
  alive; none -> with ``unclean.leader.election.enable`` the first live replica (ISR = itself,
  records it lacks are lost, logged at WARNING), else leader -1 with the ISR kept, so the last
  in-sync replica is elected when it returns (OfflinePartition). A shutting-down leader with no
  other candidate keeps leading. Every leader change bumps the leader epoch.

Passes are serialised by one task and coalesced (many events while a pass runs -> one more
pass), so the controller never acts on two views of the cluster at once. A BadVersion on a
partition (a leader changed its ISR meanwhile) just triggers another pass.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from typing import TYPE_CHECKING

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from broker.cluster import znodes
from broker.cluster.controller_zk import ClusterView, bump_epoch, delete_topic_znodes, read_view
from broker.cluster.znodes import (
    NO_LEADER,
    PartitionState,
    TopicAssignment,
    encode_controller,
    partition_state_path,
)

if TYPE_CHECKING:
    from kazoo.client import KazooClient

    from broker.cluster.zk_client import ZkClient
    from broker.config import BrokerConfig

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]


class Controller:
    def __init__(self, config: BrokerConfig, zk: ZkClient) -> None:
        self.config = config
        self.broker_id = config.node_id
        self.zk = zk
        self.active = False
        self.epoch = 0
        self._epoch_version = -1
        self._pending = asyncio.Event()
        self._rebalance_requested = False
        self._task: asyncio.Task[None] | None = None
        self._rebalance_task: asyncio.Task[None] | None = None
        self._electing = False

    async def stop(self) -> None:
        self.active = False
        for task in (self._task, self._rebalance_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._task = self._rebalance_task = None

    # ------------------------------------------------------------------ election

    async def try_elect(self) -> None:
        """Stands for controller (called at start, when /controller vanishes, new session)."""
        if self.active or self._electing:
            return
        self._electing = True
        try:
            try:
                await self.zk.call(
                    "create", znodes.CONTROLLER, encode_controller(self.broker_id), ephemeral=True
                )
            except NodeExistsError:
                return
            self.epoch, self._epoch_version = await self.zk.run(bump_epoch)
            self.active = True
            log.info("elected controller", extra={"broker": self.broker_id, "epoch": self.epoch})
            loop = asyncio.get_running_loop()
            if self._task is None or self._task.done():
                self._task = loop.create_task(self._run(), name="controller")
            if self.config.auto_leader_rebalance_enable and (
                self._rebalance_task is None or self._rebalance_task.done()
            ):
                self._rebalance_task = loop.create_task(self._rebalance_loop())
            self.request("became controller")
        except Exception as exc:
            log.warning("controller election failed: %r", exc)
        finally:
            self._electing = False

    def resign(self) -> None:
        if self.active:
            log.info("no longer controller", extra={"broker": self.broker_id})
        self.active = False

    def request(self, reason: str) -> None:
        """Asks for a reconcile pass (coalesced); a no-op unless this broker is controller."""
        if self.active:
            log.debug("controller pass requested: %s", reason)
            self._pending.set()

    async def _run(self) -> None:
        while True:
            await self._pending.wait()
            self._pending.clear()
            if not self.active:
                continue
            try:
                again = await self._reconcile()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("controller pass failed: %r; retrying", exc)
                again = True
                await asyncio.sleep(0.5)
            if again:
                self._pending.set()

    async def _rebalance_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.leader_imbalance_check_interval_seconds)
            self._rebalance_requested = True
            self.request("leader imbalance check")

    # ------------------------------------------------------------------ reconcile

    async def _reconcile(self) -> bool:
        """One pass; True if another pass is needed (a write lost a race)."""
        view = await self.zk.run(read_view)
        for topic in view.deletions:
            await self.zk.run(delete_topic_znodes, topic)
            log.info("deleted topic", extra={"topic": topic})
            view.topics.pop(topic, None)
        alive = view.alive
        ready = alive - view.shutting_down
        preferred = set(view.preferred)
        if self._rebalance_requested:
            self._rebalance_requested = False
            preferred |= self._imbalanced(view, ready)
        writes: list[tuple[TopicPartition, PartitionState | None, PartitionState]] = []
        for topic, assignment in view.topics.items():
            for p, replicas in sorted(assignment.partitions.items()):
                tp = (topic, p)
                old = view.states.get(tp)
                new = self._decide(tp, replicas, old, alive, ready, tp in preferred)
                if new is not None:
                    writes.append((tp, old, new))
        retry = False
        if writes:
            results = await self.zk.run(self._write_states, writes)
            outcomes = list(zip(writes, results, strict=True))
            _log_decisions([(tp, new) for (tp, _, new), error in outcomes if error is None])
            for (tp, _, _), error in outcomes:
                if error is None:
                    continue
                if isinstance(error, BadVersionError | NodeExistsError | NoNodeError):
                    retry = True
                elif isinstance(error, _FencedError):
                    self.resign()
                    return False
                else:
                    log.warning("[%s-%d] state write failed: %r", tp[0], tp[1], error)
                    retry = True
        if view.preferred:
            with contextlib.suppress(NoNodeError):
                await self.zk.call("delete", znodes.PREFERRED_ELECTION)
        if not retry:
            retry = await self._finish_reassignments(view, {tp: new for tp, _, new in writes})
        return retry

    async def _finish_reassignments(
        self, view: ClusterView, written: dict[TopicPartition, PartitionState]
    ) -> bool:
        """Completes reassignments whose target replicas are all in the ISR (KIP-455): the
        leader moves into the target set if needed, removed replicas leave the ISR, then the
        topic znode keeps only the target. True if a write lost a race."""
        for topic, assignment in view.topics.items():
            moving = set(assignment.adding) | set(assignment.removing)
            if not moving:
                continue
            partitions = dict(assignment.partitions)
            adding, removing = dict(assignment.adding), dict(assignment.removing)
            done = False
            for p in sorted(moving):
                state = written.get((topic, p)) or view.states.get((topic, p))
                removed = set(removing.get(p, ()))
                target = tuple(r for r in partitions[p] if r not in removed)
                if state is None or not all(r in state.isr for r in target):
                    continue
                leader = state.leader
                epoch = state.leader_epoch
                if leader not in target:
                    leader, epoch = next(r for r in target if r in state.isr), epoch + 1
                isr = tuple(r for r in state.isr if r in target)
                if (leader, isr) != (state.leader, state.isr):
                    current = view.states.get((topic, p))
                    new = PartitionState(leader, epoch, isr, self.epoch)
                    errors = await self.zk.run(self._write_states, [((topic, p), current, new)])
                    if errors[0] is not None:
                        return True
                partitions[p] = target
                adding.pop(p, None)
                removing.pop(p, None)
                done = True
                log.info("[%s-%d] reassignment complete: replicas %s", topic, p, list(target))
            if done:
                updated = TopicAssignment(assignment.topic_id, partitions, adding, removing)
                try:
                    await self.zk.call(
                        "set", znodes.topic_path(topic), updated.encode(),
                        version=view.topic_versions[topic],
                    )  # fmt: skip
                except BadVersionError:
                    return True
        return False

    def _decide(
        self,
        tp: TopicPartition,
        replicas: tuple[int, ...],
        old: PartitionState | None,
        alive: set[int],
        ready: set[int],
        preferred: bool,
    ) -> PartitionState | None:
        epoch = self.epoch
        if old is None:
            live = [r for r in replicas if r in ready] or [r for r in replicas if r in alive]
            if not live:
                return None
            return PartitionState(live[0], 0, tuple(r for r in replicas if r in alive), epoch)
        isr = tuple(r for r in old.isr if r in ready)
        if old.leader in ready:
            if preferred and replicas and replicas[0] != old.leader and replicas[0] in isr:
                return PartitionState(replicas[0], old.leader_epoch + 1, isr, epoch)
            if old.leader not in isr:
                isr = (*isr, old.leader)
            if set(isr) != set(old.isr):
                return PartitionState(old.leader, old.leader_epoch, isr, epoch)
            return None
        candidates = [r for r in replicas if r in isr]
        if candidates:
            return PartitionState(candidates[0], old.leader_epoch + 1, isr, epoch)
        if old.leader in alive:
            return None  # shutting down with nobody to take over: keeps leading
        if self.config.unclean_leader_election_enable:
            live = [r for r in replicas if r in ready]
            if live:
                log.warning(
                    "[%s-%d] unclean leader election: %d was not in the ISR %s; records it "
                    "lacks are lost", tp[0], tp[1], live[0], list(old.isr),
                )  # fmt: skip
                return PartitionState(live[0], old.leader_epoch + 1, (live[0],), epoch)
        if old.leader == NO_LEADER:
            return None
        log.warning(
            "[%s-%d] offline: no in-sync replica of %s is alive", tp[0], tp[1], list(old.isr)
        )
        kept = isr or old.isr
        return PartitionState(NO_LEADER, old.leader_epoch + 1, kept, epoch)

    def _imbalanced(self, view: ClusterView, ready: set[int]) -> set[TopicPartition]:
        """Partitions to hand back to their preferred leader (Kafka's per-broker ratio rule)."""
        owned: dict[int, list[TopicPartition]] = {}
        for topic, assignment in view.topics.items():
            for p, replicas in assignment.partitions.items():
                if replicas:
                    owned.setdefault(replicas[0], []).append((topic, p))
        chosen: set[TopicPartition] = set()
        ratio = self.config.leader_imbalance_per_broker_percentage / 100
        for broker, tps in owned.items():
            if broker not in ready:
                continue
            off = [
                tp
                for tp in tps
                if (s := view.states.get(tp)) is not None and s.leader != broker
                and broker in s.isr
            ]  # fmt: skip
            if off and len(off) / len(tps) > ratio:
                chosen.update(off)
        return chosen

    def _write_states(
        self,
        zk: KazooClient,
        writes: list[tuple[TopicPartition, PartitionState | None, PartitionState]],
    ) -> list[Exception | None]:
        """Each write in its own transaction guarded by the controller epoch (blocking)."""
        pending = []
        for tp, old, new in writes:
            path = partition_state_path(*tp)
            if old is None:
                zk.ensure_path(path.rsplit("/", 1)[0])
            tx = zk.transaction()
            tx.check(znodes.CONTROLLER_EPOCH, self._epoch_version)
            if old is None:
                tx.create(path, new.encode())
            else:
                tx.set_data(path, new.encode(), version=old.zk_version)
            pending.append(tx.commit_async())
        errors: list[Exception | None] = []
        for result in pending:
            try:
                outcome = result.get()
            except Exception as exc:
                errors.append(exc)
                continue
            check, write = outcome
            if isinstance(check, BadVersionError):
                errors.append(_FencedError())
            elif isinstance(write, Exception):
                errors.append(write)
            elif isinstance(check, Exception):
                errors.append(check)
            else:
                errors.append(None)
        return errors


class _FencedError(Exception):
    """Another controller bumped the epoch: this one must stop acting."""


LISTED_DECISIONS = 5
"""Up to this many leadership changes in one pass get a line each; more get one summary line
(a broker's controlled shutdown moves every partition it leads) and a line each at DEBUG."""


def _log_decisions(written: list[tuple[TopicPartition, PartitionState]]) -> None:
    """Logs the partition states this pass wrote. A new partition's first state (epoch 0) is
    part of creating its topic, logged there, so it is DEBUG here."""
    changes = [(tp, new) for tp, new in written if new.leader_epoch > 0]
    listed = len(changes) <= LISTED_DECISIONS
    for tp, new in written:
        level = logging.INFO if listed and new.leader_epoch > 0 else logging.DEBUG
        log.log(level, "[%s-%d] leader %d epoch %d isr %s", tp[0], tp[1], new.leader,
                new.leader_epoch, list(new.isr))  # fmt: skip
    if not listed:
        leaders = collections.Counter(new.leader for _, new in changes)
        log.info(
            "partition leadership changed",
            extra={
                "partitions": len(changes),
                "topics": ",".join(sorted({tp[0] for tp, _ in changes})),
                "leaders": ",".join(f"{b}:{n}" for b, n in sorted(leaders.items())),
            },
        )
