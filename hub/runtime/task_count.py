"""How many tasks a connector may run: its ``tasks.max``, within the worker's ``tasks.max.limit``.

Every task is a thread of the worker (a sink task also owns a consumer with librdkafka threads
of its own), so the count is a resource decision, not only the connector's. Two rules:

- ``tasks.max`` above the worker's ``tasks.max.limit`` (default 64; not a Kafka Connect key:
  Connect has no cap) is a validation error naming both keys, and a stored config that asks for
  more (written when the limit was higher, or by another tool) fails its connector with the
  same message instead of starting the threads;
- a connector that generates more task configs than ``tasks.max`` fails (Kafka 3.8's
  ``tasks.max.enforce``, KIP-1004, default true). With ``tasks.max.enforce=false`` the extra
  tasks run, as in Kafka, with a warning, but never more than ``tasks.max.limit``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from hub.runtime.errors import TooManyTasksError

log = logging.getLogger(__name__)

LIMIT_KEY = "tasks.max.limit"
ENFORCE_KEY = "tasks.max.enforce"


def requested(config: Mapping[str, Any]) -> int:
    """The connector's ``tasks.max`` (1 when unset); ValueError when it is not an integer."""
    return int(str(config.get("tasks.max", 1)).strip())


def limit_errors(config: Mapping[str, Any], limit: int) -> dict[str, list[str]]:
    """Validation errors of ``tasks.max`` and ``tasks.max.enforce``, by key."""
    errors: dict[str, list[str]] = {}
    try:
        count = requested(config)
    except ValueError:
        errors["tasks.max"] = ["must be an integer"]
    else:
        if count < 1:
            errors["tasks.max"] = ["must be at least 1"]
        elif count > limit:
            errors["tasks.max"] = [_over_limit(count, limit)]
    enforce = str(config.get(ENFORCE_KEY, "true")).strip().lower()
    if enforce not in ("true", "false"):
        errors[ENFORCE_KEY] = ["must be true or false"]
    return errors


def check_requested(name: str, max_tasks: int, limit: int) -> None:
    """Raises ``TooManyTasksError`` before a connector is asked for more tasks than allowed."""
    if max_tasks > limit:
        raise TooManyTasksError(f"Connector {name}: {_over_limit(max_tasks, limit)}")


def check_generated(
    name: str,
    configs: Sequence[Mapping[str, Any]],
    max_tasks: int,
    limit: int,
    enforce: bool = True,
) -> None:
    """Raises ``TooManyTasksError`` when a connector generated more tasks than it may run."""
    count = len(configs)
    if count <= max_tasks:
        return
    if count > limit:
        raise TooManyTasksError(
            f"Connector {name} generated {count} task configs, more than this worker's "
            f"{LIMIT_KEY}={limit}; nothing was started"
        )
    if enforce:
        raise TooManyTasksError(
            f"Connector {name} generated {count} task configs, more than tasks.max={max_tasks}. "
            f"This is a bug in the connector; set {ENFORCE_KEY}=false to run them anyway "
            "(deprecated in Kafka)"
        )
    log.warning(
        "connector generated more tasks than tasks.max; running them (tasks.max.enforce=false)",
        extra={"connector": name, "tasks": count, "tasks_max": max_tasks},
    )


def enforced(config: Mapping[str, Any]) -> bool:
    return str(config.get(ENFORCE_KEY, "true")).strip().lower() != "false"


def _over_limit(count: int, limit: int) -> str:
    return (
        f"tasks.max={count} exceeds this worker's {LIMIT_KEY}={limit}: lower tasks.max, or raise "
        f"{LIMIT_KEY} in the worker config (each task is a thread)"
    )
