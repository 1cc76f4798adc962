"""Group membership over Kafka's group protocol (protocol type ``connect``) and the member fence.

``WorkerCoordinator`` extends kafka-python's ``BaseCoordinator`` (docs/decisions.md): it
brings FindCoordinator, JoinGroup/SyncGroup, the heartbeat coroutine and LeaveGroup, with
every security setting kafka-python supports, against any Kafka-compatible broker. This module
adds what a Connect worker needs on top:

- the hooks, called on kafka-python's IO thread: ``revoke`` before every (re)join (eager
  protocol: a member stops everything before it asks to join, and the broker completes a
  rebalance only once every live member has rejoined, so no task is started elsewhere while
  it still runs here), ``assign`` on the leader, ``assigned`` with this member's assignment;
- the fence (``alive``): a member is sure of its membership only until ``session.timeout.ms``
  after it *sent* the last request the coordinator answered without error (a heartbeat or the
  JoinGroup). The coordinator evicts it no earlier than that, so a member that checks
  ``alive`` before each write never writes after another member may own its work, even when
  the whole process was frozen (SIGSTOP, a VM pause) past its session and every thread
  resumes at once.

``Membership`` drives it from one thread of its own (``ensure_active_group`` in a loop).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from kafka import errors as Errors
from kafka.coordinator.base import BaseCoordinator
from kafka.net.compat import KafkaNetClient

log = logging.getLogger(__name__)
REPEAT_S = 60.0  # one line per distinct kafka-python message (digits aside) per minute


class _RepeatFilter(logging.Filter):
    """Lets each distinct kafka-python message through once per ``REPEAT_S``: while a
    coordinator is down it logs the same warning hundreds of times a second."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = re.sub(r"\d+", "N", f"{record.name}:{record.getMessage()}")[:200]
        now = time.monotonic()
        if now - self._seen.get(key, float("-inf")) < REPEAT_S:
            return False
        if len(self._seen) > 1024:
            self._seen.clear()
        self._seen[key] = now
        return True


_kafka_log = logging.getLogger("kafka")
if _kafka_log.level == logging.NOTSET:
    # kafka-python narrates every join and connection at INFO; ours are the lines that matter.
    _kafka_log.setLevel(logging.WARNING)
_filter = _RepeatFilter()  # on each logger that logs itself (filters do not propagate)
for _name in ("kafka.coordinator", "kafka.coordinator.heartbeat", "kafka.net.manager",
              "kafka.net.connection", "kafka.net.transport", "kafka.net.selector",
              "kafka.cluster", "kafka.net.sasl.scram", "kafka.net.sasl.plain"):  # fmt: skip
    logging.getLogger(_name).addFilter(_filter)


class WorkerCoordinator(BaseCoordinator):  # type: ignore[misc]
    """One worker's membership; the callbacks do the work (see the module docstring)."""

    def __init__(
        self,
        client: Any,
        *,
        protocol_type: str,
        protocol_name: str,
        metadata: Callable[[], bytes],
        revoke: Callable[[], None],
        assign: Callable[[str, list[tuple[str, bytes]]], dict[str, bytes]],
        assigned: Callable[[int, str, bytes], None],
        **configs: Any,
    ) -> None:
        super().__init__(client, **configs)
        self._protocol_type = protocol_type
        self._protocol_name = protocol_name
        self._metadata = metadata
        self._revoke = revoke
        self._assign = assign
        self._assigned = assigned
        self.session_s = configs["session_timeout_ms"] / 1000
        self.alive_since = float("-inf")  # monotonic send time of the last good answer
        # kafka-python leaves the group when its user stops calling poll (a consumer's
        # max.poll.interval.ms); a worker has no poll loop, and applying an assignment may
        # wait on the brokers for a while: membership rests on heartbeats alone.
        self.heartbeat.poll_timeout_expired = lambda: False

    def protocol_type(self) -> str:
        return self._protocol_type

    def group_protocols(self) -> list[tuple[str, bytes]]:
        return [(self._protocol_name, self._metadata())]

    async def _on_join_prepare_async(
        self, generation: int, member_id: str, timeout_ms: Any = None
    ) -> None:
        # Still a member while revoking (the coordinator waits for this JoinGroup), so the
        # stopping tasks commit their offsets; only then does the fence close until rejoined.
        self._revoke()
        self.alive_since = float("-inf")

    def _perform_assignment(
        self, leader_id: str, protocol: str, members: list[Any]
    ) -> dict[str, bytes]:
        return self._assign(leader_id, [(m.member_id, bytes(m.metadata)) for m in members])

    async def _on_join_complete_async(
        self, generation: int, member_id: str, protocol: str, member_assignment_bytes: bytes
    ) -> None:
        # Heartbeat at once rather than an interval from now: the JoinGroup may have waited
        # long for other members (a dead one's session), and its send time is all the fence
        # knows until a heartbeat is answered.
        self.heartbeat.last_reset -= self.config["heartbeat_interval_ms"] / 1000
        self._heartbeat_wakeup.notify()
        self._assigned(generation, member_id, bytes(member_assignment_bytes))

    def _process_join_group_response(self, response: Any, send_time: float) -> Any:
        result = super()._process_join_group_response(response, send_time)
        self.alive_since = send_time
        return result

    def _handle_heartbeat_response(self, response: Any, send_time: float) -> Any:
        try:
            result = super()._handle_heartbeat_response(response, send_time)  # raises on errors
        except Errors.RebalanceInProgressError:
            # still a member (the coordinator renewed its session); tasks run until revoke
            self.alive_since = max(self.alive_since, send_time)
            raise
        self.alive_since = max(self.alive_since, send_time)
        return result

    def alive(self) -> bool:
        """True while this member is certainly still a member of its generation."""
        return time.monotonic() < self.alive_since + self.session_s


class Membership:
    """Runs a ``WorkerCoordinator`` on a thread: joins, rejoins when asked, leaves on ``stop``.

    ``tick`` runs on the same thread after every join attempt (at least every ``poll_s``), so
    the owner can apply assignments and config changes without a thread of its own."""

    def __init__(
        self,
        client_config: dict[str, Any],
        group_id: str,
        *,
        tick: Callable[[], None],
        session_timeout_ms: int,
        heartbeat_interval_ms: int,
        rebalance_timeout_ms: int,
        client_id: str,
        poll_s: float = 0.2,
        **hooks: Any,
    ) -> None:
        settings = kafka_python_settings(client_config)
        self._client = KafkaNetClient(client_id=client_id, **settings)
        self._client._net.start()
        self._client._manager.bootstrap(timeout_ms=15_000)
        self.coordinator = WorkerCoordinator(
            self._client,
            group_id=group_id,
            session_timeout_ms=session_timeout_ms,
            heartbeat_interval_ms=heartbeat_interval_ms,
            max_poll_interval_ms=rebalance_timeout_ms,
            api_version=self._client._manager.broker_version,
            retry_backoff_ms=100,
            **hooks,
        )
        self._tick = tick
        self._poll_s = poll_s
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="worker-membership", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """Runs ``tick`` soon (a config change to apply)."""
        self._wake.set()

    def request_rejoin(self) -> None:
        self.coordinator.request_rejoin()
        self._wake.set()

    def alive(self) -> bool:
        return bool(self.coordinator.alive())

    def rebalancing(self) -> bool:
        return bool(self.coordinator.need_rejoin() or not self.coordinator.stable())

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                # No timeout: kafka-python's join, when its caller gives up waiting, starts a
                # new JoinGroup on the next call and drops the finished one's assignment, so
                # a join slower than any timeout here would rebalance forever.
                self.coordinator.ensure_active_group(timeout_ms=None)
                self.coordinator.poll_heartbeat()
                self.error = None
            except Exception as exc:  # the coordinator retries; keep the loop alive
                if self.error is None or type(self.error) is not type(exc):
                    log.warning("group membership failed; retrying", extra={"error": repr(exc)})
                self.error = exc
                self._stopping.wait(0.5)
            if self._stopping.is_set():
                break
            try:
                self._tick()
            except Exception:
                log.exception("applying the group assignment failed")
            self._wake.wait(self._poll_s)
            self._wake.clear()

    def halt(self) -> None:
        """Stops the loop: no more joins or ticks (heartbeats go on until ``leave``)."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(5)  # a join in progress may hold it longer: leave() ends that

    def leave(self) -> None:
        """Leaves the group (the caller stopped its tasks first) and closes the client."""
        try:
            self.coordinator.close(timeout_ms=5000)
        except Exception as exc:
            log.warning("leaving the group failed", extra={"error": repr(exc)})
        try:
            self._client._net.stop(timeout_ms=5000)
        except Exception:
            log.debug("kafka-python IO loop did not stop cleanly", exc_info=True)


_SETTINGS = {
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.mechanisms": "sasl_mechanism",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
}


def kafka_python_settings(client_config: dict[str, Any]) -> dict[str, Any]:
    """The worker's (librdkafka-named) client settings in kafka-python's names: bootstrap
    servers and the security settings both clients share. Anything else is librdkafka's own
    tuning and does not apply to the membership client."""
    out: dict[str, Any] = {"bootstrap_servers": str(client_config["bootstrap.servers"]).split(",")}
    for key, name in _SETTINGS.items():
        if key in client_config:
            out[name] = client_config[key]
    return out
