"""``DistributedHerder``: one worker of a group that shares connectors and tasks.

Kafka Connect's distributed herder, eager protocol (docs/distributed.md):

- Membership through Kafka's group protocol (``coordinator``): before every rebalance this
  worker stops all it runs (revoke), the leader assigns every connector and task over the
  members (``protocol.assign``), and each member starts its share once its view of the config
  topic is at least as new as the assignment.
- The config topic is the only source of truth and the leader its only writer: REST writes
  arriving elsewhere are forwarded to the leader (``forward``), and answered 409 while a
  rebalance is in progress; a connector's new task configs go to the leader the same way
  (``POST /connectors/{name}/tasks``). Reads answer from the local view.
- Each config change is seen by every worker through the config topic: the leader starts a
  rebalance when connectors or task sets change; owners apply pause/resume and restart
  requests (``restart-connector-<name>`` records, as Kafka Connect's KIP-745) themselves.
- The fence: tasks check ``Membership.alive`` before each write and commit, so a worker that
  lost its membership without noticing (frozen past its session) writes nothing on waking.

Threads: config-topic records arrive on the store's reader thread and are queued; the
membership thread applies assignments and queued changes (``_tick``); revoke and the leader's
assignment run on kafka-python's IO thread, while the membership thread waits for the join.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any

from hub.runtime.config import WorkerConfig
from hub.runtime.distributed import ownership
from hub.runtime.distributed.coordinator import Membership
from hub.runtime.distributed.forward import LeaderForwarder, path
from hub.runtime.distributed.protocol import (
    CONFIG_MISMATCH,
    PROTOCOL_NAME,
    PROTOCOL_TYPE,
    Assignment,
    MemberMetadata,
    assign,
)
from hub.runtime.distributed.rebalance_stats import RebalanceStats
from hub.runtime.distributed.writes import LeaderWrites
from hub.runtime.errors import ConflictError, ForwardedError, WorkerConfigError
from hub.runtime.herder import Herder
from hub.runtime.worker_task import ConnectorTaskId

log = logging.getLogger(__name__)

REBALANCING = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
CATCH_UP_S = 30.0  # how long a member reads the config topic to reach an assignment's offset


class DistributedHerder(LeaderWrites, Herder):
    def __init__(self, config: WorkerConfig, **kwargs: Any) -> None:
        _check_settings(config)
        super().__init__(config, **kwargs)
        self.url = f"{config.rest_scheme}://{config.worker_id}"
        extra = config.model_extra or {}
        trust = extra.get("listeners.https.ssl.truststore.location") or extra.get(
            "ssl.truststore.location"
        )  # a PEM CA bundle for the other workers' https listeners
        self._forwarder = LeaderForwarder(
            config.rest_auth_token, config.rest_auth_basic, verify=str(trust) if trust else True
        )
        self._membership: Membership | None = None
        self._events: queue.SimpleQueue[tuple[str, str, Any]] = queue.SimpleQueue()
        self._pending: tuple[str, Assignment] | None = None  # received, not yet applied
        self._assignment: Assignment | None = None  # what runs here now
        self._member_id = ""
        self._generation = -1
        self.rebalance_stats = RebalanceStats()
        """Connect's rebalance metrics of this worker (``GET /metrics``)."""
        self._targets: dict[str, str] = {}
        self._unsubmitted: dict[str, list[dict[str, Any]]] = {}  # task configs for the leader
        self._run_lock = threading.RLock()  # applying an assignment vs revoking it
        self.configs.listeners.append(self._on_config_record)
        self.worker.member_alive = self._alive_or_rejoin

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """Loads the stores, then joins the group; tasks start when the first assignment
        arrives (on the membership thread)."""
        ownership.refuse_if_standalone(self.config)
        for store in (self.configs, self.offsets, self.statuses):
            store.start()
        self._targets = {n: self.configs.target_state(n) for n in self.configs.connectors()}
        self._cluster_id = self.admin.cluster_id()
        self.worker.start()
        c = self.config
        self._membership = Membership(
            c.client_config("admin"),
            c.group_id,
            tick=self._tick,
            session_timeout_ms=c.session_timeout_ms,
            heartbeat_interval_ms=c.heartbeat_interval_ms,
            rebalance_timeout_ms=c.rebalance_timeout_ms,
            client_id=f"sluice-worker-{c.worker_id}",
            protocol_type=PROTOCOL_TYPE,
            protocol_name=PROTOCOL_NAME,
            metadata=self._metadata,
            revoke=self._revoke,
            assign=self._assign,
            assigned=self._assigned,
        )
        self._membership.start()
        self._ready = True
        log.info("distributed worker started", extra={"group": c.group_id, "url": self.url})

    def stop(self) -> None:
        """Stops the membership loop, stops every task (committing offsets), then leaves the
        group so the others rebalance at once instead of after the session timeout."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        if self._membership is not None:
            self._membership.halt()
        self._revoke()
        if self._membership is not None:
            self._membership.leave()
        self._forwarder.close()
        self.worker.stop()
        for store in (self.statuses, self.offsets, self.configs):
            try:
                store.stop()
            except Exception:
                log.exception("store did not stop cleanly")

    def _alive_or_rejoin(self) -> bool:
        """The tasks' fence: False once membership may have lapsed, and then this worker
        rejoins (revoking everything) instead of waiting for its heartbeat to find out."""
        membership = self._membership
        if membership is not None and membership.alive():
            return True
        if membership is not None and not self._stopped and not membership.rebalancing():
            log.warning("group membership may have lapsed; rejoining")
            membership.request_rejoin()
        return False

    # -- the group protocol's hooks ----------------------------------------------------------------
    def _metadata(self) -> bytes:
        return MemberMetadata(self.url, self.configs.offset).encode()

    def _revoke(self) -> None:
        """Before every (re)join: everything this worker runs stops (committing offsets)."""
        self.rebalance_stats.started()
        with self._run_lock:
            self._assignment = None
            self._pending = None
            self._unsubmitted.clear()
            names = self.worker.running_connectors()
            self.worker.stop_tasks(sorted(self.worker.all_task_ids()))
            for name in names:
                self.worker.stop_connector(name)
        if names:
            log.info("assignment revoked", extra={"connectors": len(names)})

    def _assign(self, leader_id: str, members: list[tuple[str, bytes]]) -> dict[str, bytes]:
        """The leader's assignment, from a config view at least as new as every member's."""
        metas = {member: MemberMetadata.decode(raw) for member, raw in members}
        newest = max(m.config_offset for m in metas.values())
        try:
            self.configs.read_to_end()
        except Exception:
            log.warning("leader could not read the config topic", exc_info=True)
        offset = self.configs.offset
        leader_url = metas[leader_id].url
        if offset < newest:
            error = Assignment(leader_id, leader_url, offset, error=CONFIG_MISMATCH)
            return {member: error.encode() for member in metas}
        counts = {name: len(self.configs.task_configs(name)) for name in self.configs.connectors()}
        plan = assign(metas, counts)
        units = {
            metas[m].url: [*conns, *(f"{c}-{i}" for c, i in tasks)]
            for m, (conns, tasks) in plan.items()
        }
        out = {}
        for member, (connectors, tasks) in plan.items():
            out[member] = Assignment(
                leader_id, leader_url, offset, tuple(connectors), tuple(tasks), members=units
            ).encode()
        log.info("assigned", extra={"members": len(metas), "connectors": len(counts)})
        return out

    def _assigned(self, generation: int, member_id: str, raw: bytes) -> None:
        self._member_id = member_id
        self._generation = generation
        self._pending = (member_id, Assignment.decode(raw))
        if self._membership is not None:
            self._membership.wake()

    # -- the membership thread ---------------------------------------------------------------------
    def _tick(self) -> None:
        pending = self._pending
        if pending is not None:
            self._apply(pending)
        if self._unsubmitted and not self.rebalancing():
            self._retry_submissions()
        while True:
            try:
                kind, name, value = self._events.get_nowait()
            except queue.Empty:
                break
            self._on_change(kind, name, value)

    def _apply(self, pending: tuple[str, Assignment]) -> None:
        member_id, assignment = pending
        membership = self._membership
        assert membership is not None
        if assignment.error:
            log.info("leader was behind on the config topic; rejoining")
            self.configs.read_to_end()
            membership.request_rejoin()
            self._pending = None
            return
        deadline = time.monotonic() + CATCH_UP_S
        while not membership.alive():  # the first heartbeat after a long join is answered
            if time.monotonic() > deadline or self._pending is not pending:
                return
            time.sleep(0.02)
        while self.configs.offset < assignment.config_offset:
            if time.monotonic() > deadline:
                log.warning("config topic not read to the assignment's offset; rejoining")
                membership.request_rejoin()
                return
            self.configs.read_to_end()
        with self._run_lock:
            if self._pending is not pending:
                return  # revoked (or replaced) meanwhile
            self._pending = None
            self._assignment = assignment
            for name in assignment.connectors:
                self._start_connector(name)
            self._sync_offsets({name for name, _ in assignment.tasks})
            for name, index in assignment.tasks:
                self._start_task(name, index)
        self.rebalance_stats.completed_with(self._generation, assignment.leader_url)
        log.info(
            "assignment applied",
            extra={
                "leader": assignment.leader == member_id,
                "connectors": len(assignment.connectors),
                "tasks": len(assignment.tasks),
            },
        )

    def _start_connector(self, name: str) -> None:
        config = self.configs.connector_config(name)
        target = self.configs.target_state(name)
        if config is None or not self.worker.start_connector(name, config, target):
            return
        if target == "STOPPED":
            return
        configs = self._generate_task_configs(name, config, "generate tasks")
        if configs is not None and configs != self.configs.task_configs(name):
            self._submit_task_configs(name, configs)

    def _sync_offsets(self, names: set[str]) -> None:
        """Reads the offsets topics to their end before tasks start: the previous owner
        committed its last offsets before it rejoined, and the new owner must resume there
        (not from an older view, which would send records twice)."""
        stores = {id(self.offsets): self.offsets}
        for name in names:
            config = self.configs.connector_config(name)
            if config is not None and self._type(config) == "source":
                store = self.worker.offsets_for(config)
                stores[id(store)] = store
        for store in stores.values():
            try:
                store.sync()
            except Exception:
                log.warning("offsets not read to their end before starting tasks", exc_info=True)

    def _start_task(self, name: str, index: int) -> None:
        config = self.configs.connector_config(name)
        configs = self.configs.task_configs(name)
        if config is None or index >= len(configs):
            return  # the next rebalance (already requested by the change) fixes this
        target = self.configs.target_state(name)
        self.worker.start_task(ConnectorTaskId(name, index), config, configs[index], target)

    def _submit_task_configs(self, name: str, configs: list[dict[str, Any]]) -> None:
        """New task configs go to the leader, the config topic's only writer; while it cannot
        take them (a rebalance, the leader just died) they are retried on every tick, as long
        as this worker runs the connector."""
        with self._run_lock:
            self._unsubmitted[name] = configs
        if self._membership is not None:
            self._membership.wake()  # sent from the membership thread, never under a lock

    def _retry_submissions(self) -> None:
        with self._run_lock:
            pending = dict(self._unsubmitted)
        for name, configs in pending.items():
            if not self.worker.is_running(name):
                with self._run_lock:
                    self._unsubmitted.pop(name, None)
                continue
            try:
                if self.is_leader():
                    self.put_task_configs(name, configs)
                elif self._assignment is not None:
                    url = self._assignment.leader_url
                    self._forwarder.send(url, "POST", path("connectors", name, "tasks"), configs)
                else:
                    continue
            except (ConflictError, ForwardedError) as exc:
                status = getattr(exc, "status", 409)
                if status != 409:
                    self._fail_connector(name, "the leader refused the task configs", exc)
                    with self._run_lock:
                        self._unsubmitted.pop(name, None)
                continue  # a rebalance: the next tick tries again
            with self._run_lock:
                if self._unsubmitted.get(name) is configs:
                    del self._unsubmitted[name]

    def _request_reconfiguration(self, name: str) -> None:
        # A connector's own thread asks: generate and submit on another thread.
        threading.Thread(target=self._reconfigure, args=(name,), daemon=True).start()

    def _reconfigure(self, name: str) -> None:
        config = self.configs.connector_config(name)
        if config is None or not self.worker.is_running(name):
            return
        configs = self._generate_task_configs(name, config, "reconfigure its tasks")
        if configs is not None and configs != self.configs.task_configs(name):
            self._submit_task_configs(name, configs)

    # -- config changes ----------------------------------------------------------------------------
    def _on_config_record(self, kind: str, name: str, value: Any) -> None:
        """On the config store's reader thread: queue, never block it."""
        self._events.put((kind, name, value))
        if self._membership is not None:
            self._membership.wake()

    def _on_change(self, kind: str, name: str, value: Any) -> None:
        membership = self._membership
        assert membership is not None
        if kind in ("connector", "commit"):
            if self.is_leader():  # connectors or task sets changed: reassign
                log.info("config changed; rebalancing", extra={"change": kind, "connector": name})
                membership.request_rejoin()
        elif kind == "target-state" and value is not None:
            state, before = value["state"], self._targets.get(name, "STARTED")
            self._targets[name] = state
            if "STOPPED" in (state, before):
                if self.is_leader():
                    membership.request_rejoin()
            elif self._owns(name):
                self.worker.set_target_state(name, state)
        elif kind == "restart-connector" and value is not None:
            self._restart_owned(name, value)

    def _owns(self, name: str) -> bool:
        a = self._assignment
        return a is not None and (name in a.connectors or any(c == name for c, _ in a.tasks))

    def _restart_owned(self, name: str, request: dict[str, Any]) -> None:
        a = self._assignment
        if a is None:
            return
        status = super().connector_status(name) if name in self.configs.connectors() else None
        if status is None:
            return
        only_failed = bool(request.get("only-failed"))
        single = request.get("task")
        restart = not only_failed or status["connector"]["state"] == "FAILED"
        if single is None and name in a.connectors and restart:
            config = self.configs.connector_config(name)
            if config is not None:
                self.worker.start_connector(name, config, self.configs.target_state(name))
        if single is None and not request.get("include-tasks"):
            return
        for entry in status["tasks"]:
            task = entry["id"]
            if (name, task) not in a.tasks or (single is not None and task != single):
                continue
            if single is None and only_failed and entry["state"] != "FAILED":
                continue
            self._restart_task(name, task)

    # -- leadership and forwarding -----------------------------------------------------------------
    def is_leader(self) -> bool:
        a = self._assignment
        return a is not None and a.leader == self._member_id

    def rebalancing(self) -> bool:
        m = self._membership
        return m is None or m.rebalancing() or self._pending is not None or self._assignment is None

    def _forward(self, method: str, target: str, body: Any = None, params: Any = None) -> Any:
        """Raises 409 during a rebalance; returns ``(True, answer)`` when forwarded to the
        leader, ``(False, None)`` when this worker is the leader and acts itself."""
        if self.rebalancing():
            raise ConflictError(REBALANCING)
        if self.is_leader():
            return False, None
        assert self._assignment is not None
        url = self._assignment.leader_url
        return True, self._forwarder.send_full(url, method, target, body, params)

    def members(self) -> dict[str, Any]:
        """Workers of the group and what each runs, from this worker's last assignment."""
        a = self._assignment
        return {
            "worker_id": self.config.worker_id,
            "url": self.url,
            "leader_url": a.leader_url if a else None,
            "rebalancing": self.rebalancing(),
            "members": a.members if a else {},
        }


UNSUPPORTED = {
    "rest.advertised.port": "workers advertise rest.port",
    "rest.advertised.listener": "workers advertise <listeners scheme>://rest.advertised.host.name"
    ":rest.port",
    "inter.worker.key.generation.algorithm": "forwarded requests carry the REST credential",
    "inter.worker.signature.algorithm": "forwarded requests carry the REST credential",
}


def _check_settings(config: WorkerConfig) -> None:
    """What a distributed worker needs, refused by name when missing or not implemented."""
    errors = {k: [f"not supported: {why}"] for k, why in UNSUPPORTED.items()
              if k in (config.model_extra or {})}  # fmt: skip
    if config.rest_port == 0:
        errors["rest.port"] = ["a distributed worker needs a fixed port: the others forward to it"]
    if errors:
        raise WorkerConfigError(f"invalid worker config: {', '.join(errors)}", errors)
