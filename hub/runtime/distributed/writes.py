"""REST writes in a distributed group: the leader acts, every other worker forwards.

``LeaderWrites`` is mixed into ``DistributedHerder`` ahead of the standalone ``Herder``: each
write first goes through ``_forward`` (409 during a rebalance; on a non-leader, the same
request sent to the leader and its answer returned) and, on the leader, only writes the config
topic. Nothing is started here: every worker applies what the config topic says through its
assignment and config-change handling (``herder``).
"""

from __future__ import annotations

import logging
from typing import Any

from hub.runtime.distributed.forward import path
from hub.runtime.errors import AlreadyExistsError

log = logging.getLogger(__name__)


class LeaderWrites:
    """The write half of ``DistributedHerder`` (it provides ``_forward`` and the stores)."""

    _forward: Any
    _lock: Any
    configs: Any
    statuses: Any
    worker: Any
    worker_id: str
    _config: Any
    _type: Any
    _validated: Any
    _forget_tasks: Any
    connector_info: Any
    connector_status: Any
    task_status: Any

    def put_task_configs(self, name: str, configs: list[dict[str, Any]]) -> None:
        """``POST /connectors/{name}/tasks``: a connector's owner submits its task configs."""
        forwarded, _ = self._forward("POST", path("connectors", name, "tasks"), configs)
        if forwarded:
            return
        with self._lock:
            connector = self._config(name)
            previous = len(self.configs.task_configs(name))
            self.configs.put_task_configs(name, [dict(c) for c in configs])
            if self._type(connector) == "source":
                self.worker.fence_zombies(name, range(len(configs), previous))
            self._forget_tasks(name, len(configs))

    def create_connector(
        self, name: str, config: dict[str, str], initial_state: str = "STARTED"
    ) -> dict[str, Any]:
        rest_state = {"STARTED": "RUNNING"}.get(initial_state, initial_state)  # REST's name
        body = {"name": name, "config": config, "initial_state": rest_state}
        forwarded, answer = self._forward("POST", "/connectors", body)
        if forwarded:
            return dict(answer[1])
        with self._lock:
            if self.configs.connector_config(name) is not None:
                raise AlreadyExistsError(f"Connector {name} already exists")
            config = self._validated(name, config)
            self.configs.put_connector_config(name, config)
            self.configs.put_target_state(name, initial_state)
            log.info("connector created", extra={"connector": name})
            return self.connector_info(name)

    def put_connector_config(self, name: str, config: dict[str, str]) -> tuple[bool, dict]:
        target = path("connectors", name, "config")
        forwarded, answer = self._forward("PUT", target, config)
        if forwarded:
            return answer[0] == 201, dict(answer[1])
        with self._lock:
            if self.configs.connector_config(name) is None:
                return True, self.create_connector(name, config)
            config = self._validated(name, config)
            self.configs.put_connector_config(name, config)
            log.info("connector reconfigured", extra={"connector": name})
            return False, self.connector_info(name)

    def delete_connector(self, name: str) -> None:
        if self._forward("DELETE", path("connectors", name))[0]:
            return
        with self._lock:
            self._config(name)
            tasks = len(self.configs.task_configs(name))
            self.configs.remove_connector_config(name)
            self.statuses.remove_connector(name, tasks)
            log.info("connector deleted", extra={"connector": name})

    def pause_connector(self, name: str) -> None:
        self._put_target(name, "PAUSED", "pause")

    def resume_connector(self, name: str) -> None:
        self._put_target(name, "STARTED", "resume")

    def _put_target(self, name: str, target: str, verb: str) -> None:
        if self._forward("PUT", path("connectors", name, verb))[0]:
            return
        with self._lock:
            self._config(name)
            self.configs.put_target_state(name, target)

    def stop_connector(self, name: str) -> None:
        if self._forward("PUT", path("connectors", name, "stop"))[0]:
            return
        with self._lock:
            self._config(name)
            self.configs.put_target_state(name, "STOPPED")
            self.configs.put_task_configs(name, [])
            self._forget_tasks(name, 0)
            log.info("connector stopped", extra={"connector": name})

    def restart_connector(
        self, name: str, include_tasks: bool = False, only_failed: bool = False
    ) -> dict[str, Any] | None:
        params = {
            "includeTasks": str(include_tasks).lower(),
            "onlyFailed": str(only_failed).lower(),
        }
        forwarded, answer = self._forward(
            "POST", path("connectors", name, "restart"), params=params
        )
        if forwarded:
            return dict(answer[1]) if answer[1] is not None else None
        with self._lock:
            status = self.connector_status(name)
            restart = not only_failed or status["connector"]["state"] == "FAILED"
            tasks = [
                t["id"]
                for t in status["tasks"]
                if include_tasks and (not only_failed or t["state"] == "FAILED")
            ]
            if restart:
                self.statuses.put_connector(name, "RESTARTING", status["connector"]["worker_id"])
            for task in tasks:
                self.statuses.put_task(name, task, "RESTARTING", self.worker_id)
            snapshot = self.connector_status(name) if include_tasks else None
            self.configs.put_restart_request(name, include_tasks, only_failed)
            return snapshot

    def restart_task(self, name: str, task: int) -> None:
        if self._forward("POST", path("connectors", name, "tasks", task, "restart"))[0]:
            return
        with self._lock:
            self.task_status(name, task)
            self.configs.put_restart_request(name, True, False, task)

    def alter_connector_offsets(self, name: str, offsets: list[dict[str, Any]]) -> str:
        target = path("connectors", name, "offsets")
        forwarded, answer = self._forward("PATCH", target, {"offsets": offsets})
        if forwarded:
            return str(answer[1]["message"])
        return super().alter_connector_offsets(name, offsets)  # type: ignore[misc,no-any-return]

    def reset_connector_offsets(self, name: str) -> str:
        forwarded, answer = self._forward("DELETE", path("connectors", name, "offsets"))
        if forwarded:
            return str(answer[1]["message"])
        return super().reset_connector_offsets(name)  # type: ignore[misc,no-any-return]
