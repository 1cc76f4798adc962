"""Who owns a set of internal topics: one live group per ``group.id``, checked before starting.

A standalone worker (``sluice up``) that started on topics a distributed group already uses
would run every connector a second time (a file read twice, a CDC slot fought over). So:

- a standalone worker first describes its ``group.id`` (DescribeGroups, through kafka-python's
  admin client: confluent-kafka describes only ``consumer`` groups) and refuses to start while
  the group has live members, whoever they are; then it joins the group itself, with protocol
  type ``connect`` and protocol ``sluice-standalone``, and stays a member while it runs (its
  lock: a second standalone worker, or a distributed one, sees a live member and refuses);
- a distributed worker refuses a group whose live member is a standalone worker; beside other
  distributed workers it joins normally (the broker also refuses a JoinGroup whose protocol
  no member supports).

A group emptied by a clean stop or by expired sessions is free again. Two workers started in
the same instant can both see an empty group; the check narrows the window to the time of one
DescribeGroups, it does not close it (docs/distributed.md).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from hub.runtime.config import WorkerConfig
from hub.runtime.distributed.coordinator import Membership, kafka_python_settings
from hub.runtime.distributed.protocol import PROTOCOL_TYPE
from hub.runtime.errors import TopicsOwnedError

log = logging.getLogger(__name__)

STANDALONE_PROTOCOL = "sluice-standalone"
LIVE_STATES = ("Stable", "PreparingRebalance", "CompletingRebalance")
DESCRIBE_TIMEOUT_S = 15.0


def describe(config: WorkerConfig) -> dict[str, Any]:
    """``group_state``, ``protocol_type``, ``protocol_data`` and ``members`` of ``group.id``.

    The request goes through kafka-python's admin client, but not its ``describe_groups``:
    that one decodes every member's metadata as a consumer's and fails on any other
    protocol's (ours is JSON), so the raw answer is read here instead."""
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(**kafka_python_settings(config.client_config("admin")))

    async def fetch() -> dict[str, Any]:
        coordinators = await admin._find_coordinator_ids([config.group_id])
        request = admin._describe_groups_request([config.group_id])
        response = await admin._manager.send(request, node_id=coordinators[config.group_id])
        group: dict[str, Any] = response.groups[0].to_dict()
        return group

    from kafka.errors import KafkaError

    deadline = time.monotonic() + DESCRIBE_TIMEOUT_S
    try:
        while True:
            try:  # a broker that just started may not have loaded its coordinator yet
                answer: dict[str, Any] = admin._manager.run(fetch)
                return answer
            except KafkaError as exc:
                if not getattr(exc, "retriable", False) or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    finally:
        admin.close()


def _live(group: dict[str, Any]) -> bool:
    return group.get("group_state") in LIVE_STATES and bool(group.get("members"))


def refuse_if_standalone(config: WorkerConfig) -> None:
    """A distributed worker's check: TopicsOwnedError while a standalone worker holds the group."""
    group = describe(config)
    if _live(group) and group.get("protocol_data") == STANDALONE_PROTOCOL:
        raise TopicsOwnedError(_message(config, group, "a standalone worker (sluice up)"))


def standalone_client_id(config: WorkerConfig) -> str:
    return f"sluice-standalone-{config.worker_id}"


def refuse_if_owned(config: WorkerConfig) -> bool:
    """A standalone worker's check: TopicsOwnedError while anyone else is a live member.

    A member with this worker's own id (host and REST port) is its previous run, killed before
    its session expired: this process holds that REST port now, so that one is dead, and the
    group drops it when its session ends (the join below waits for that)."""
    group = describe(config)
    own = standalone_client_id(config)
    if _live(group) and any(m.get("client_id") != own for m in group["members"]):
        who = (
            "another standalone worker"
            if group.get("protocol_data") == STANDALONE_PROTOCOL
            else "a distributed worker group (sluice connect)"
            if group.get("protocol_type") == PROTOCOL_TYPE
            else "a group of other clients"
        )
        raise TopicsOwnedError(_message(config, group, who))
    return _live(group)  # only this worker's own dead predecessor is in it


def _message(config: WorkerConfig, group: dict[str, Any], who: str) -> str:
    hosts = sorted({m.get("client_host", "?") for m in group.get("members", [])})
    return (
        f"the internal topics ({config.config_storage_topic}, {config.offset_storage_topic}, "
        f"{config.status_storage_topic}) of group.id {config.group_id!r} are in use by {who}: "
        f"{len(group['members'])} live member(s) on {', '.join(hosts)}; stop them, or give "
        "this worker its own group.id and internal topics"
    )


class StandaloneLock:
    """A standalone worker's membership of its ``group.id``, held while it runs."""

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self._membership: Membership | None = None

    def acquire(self) -> None:
        predecessor = refuse_if_owned(self.config)
        c = self.config
        self._membership = Membership(
            c.client_config("admin"),
            c.group_id,
            tick=lambda: None,
            session_timeout_ms=c.session_timeout_ms,
            heartbeat_interval_ms=c.heartbeat_interval_ms,
            rebalance_timeout_ms=c.rebalance_timeout_ms,
            client_id=standalone_client_id(c),
            protocol_type=PROTOCOL_TYPE,
            protocol_name=STANDALONE_PROTOCOL,
            metadata=lambda: b"{}",
            revoke=lambda: None,
            assign=lambda _leader, members: {m: b"{}" for m, _ in members},
            assigned=lambda *_: None,
            poll_s=1.0,
        )
        self._membership.start()
        # Hold the lock before the worker starts anything: until the JoinGroup completes, the
        # group still looks empty to a second worker's DescribeGroups. A join can wait for a
        # killed predecessor's session to expire, so the wait is bounded by the session (plus
        # a rebalance); past it the worker starts anyway and says so.
        # After a kill -9 of this same worker, its dead member keeps the group live (others
        # are refused meanwhile) and the join waits for its session to expire: no need to wait.
        deadline = time.monotonic() + (c.session_timeout_ms + c.rebalance_timeout_ms) / 1000
        membership = self._membership
        while not predecessor and not (membership.alive() and not membership.rebalancing()):
            if time.monotonic() > deadline:
                log.warning(
                    "standalone lock: the group join did not complete; starting without it",
                    extra={"group": c.group_id},
                )
                break
            time.sleep(0.05)  # polling the join's state, with the deadline above

    def release(self) -> None:
        if self._membership is not None:
            self._membership.halt()
            self._membership.leave()
            self._membership = None
