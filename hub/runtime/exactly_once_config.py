"""KIP-618's connector keys: their validation and what a source task makes of them.

Connector keys (Kafka Connect's names and values):

- ``exactly.once.support``: ``requested`` (default) or ``required``. ``required`` is refused
  unless the worker runs with ``exactly.once.source.support=enabled`` and the connector answers
  SUPPORTED to ``exactly_once_support(config)``.
- ``transaction.boundary``: ``poll`` (default), ``interval`` or ``connector``; ``connector``
  needs SUPPORTED from ``can_define_transaction_boundaries(config)``.
- ``transaction.boundary.interval.ms``: with ``interval``, how long a transaction stays open
  (default: the worker's ``offset.flush.interval.ms``); refused by name with another boundary
  rather than ignored.
- ``offsets.storage.topic``: the connector's own offsets topic (created if missing); its
  offsets win over the worker's global topic, which is still read for partitions it lacks.

These keys are for source connectors; a sink that sets one is refused by name. With the
worker's exactly-once support disabled, the boundary keys have no effect (as in Kafka
Connect), and ``offsets.storage.topic`` still moves the connector's offsets.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hub.api import ConnectorTransactionBoundaries, ExactlyOnceSupport, SinkConnector
from hub.runtime.config import WorkerConfig

SUPPORT_KEY = "exactly.once.support"
BOUNDARY_KEY = "transaction.boundary"
INTERVAL_KEY = "transaction.boundary.interval.ms"
OFFSETS_TOPIC_KEY = "offsets.storage.topic"
SOURCE_ONLY = (SUPPORT_KEY, BOUNDARY_KEY, INTERVAL_KEY, OFFSETS_TOPIC_KEY)
BOUNDARIES = ("poll", "interval", "connector")
_TOPIC = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")


@dataclass(frozen=True)
class TransactionSettings:
    """How one source connector's tasks delimit transactions."""

    boundary: str = "poll"
    interval_ms: int = 60_000
    offsets_topic: str | None = None

    @classmethod
    def of(cls, config: Mapping[str, Any], worker: WorkerConfig) -> TransactionSettings:
        boundary = str(config.get(BOUNDARY_KEY, "poll")).strip().lower() or "poll"
        raw = config.get(INTERVAL_KEY)
        interval = int(raw) if raw not in (None, "") else worker.offset_flush_interval_ms
        topic = str(config.get(OFFSETS_TOPIC_KEY, "")).strip() or None
        return cls(boundary, interval, topic)


def exactly_once_errors(
    worker: WorkerConfig, cls: type[Any], config: Mapping[str, Any]
) -> dict[str, list[str]]:
    """Field -> reasons for the KIP-618 keys of one connector config."""
    if issubclass(cls, SinkConnector):
        return {
            key: [f"{key} applies to source connectors only"]
            for key in SOURCE_ONLY
            if key in config
        }
    errors: dict[str, list[str]] = {}
    support = str(config.get(SUPPORT_KEY, "requested")).strip().lower()
    if support not in ("requested", "required"):
        errors[SUPPORT_KEY] = [f"must be 'requested' or 'required', not {support!r}"]
    elif support == "required":
        if not worker.exactly_once_enabled:
            errors[SUPPORT_KEY] = [
                "exactly-once support is required, but this worker runs with "
                f"exactly.once.source.support={worker.exactly_once_source_support}; set it to "
                "enabled in the worker config"
            ]
        else:
            answer = cls.exactly_once_support(config)
            if answer is not ExactlyOnceSupport.SUPPORTED:
                says = "does not say it supports" if answer is None else "does not support"
                errors[SUPPORT_KEY] = [
                    f"the connector {says} exactly-once delivery with this configuration"
                ]
    boundary = str(config.get(BOUNDARY_KEY, "poll")).strip().lower()
    if boundary not in BOUNDARIES:
        errors[BOUNDARY_KEY] = [f"must be one of {', '.join(BOUNDARIES)}, not {boundary!r}"]
    elif boundary == "connector" and (
        cls.can_define_transaction_boundaries(config)
        is not ConnectorTransactionBoundaries.SUPPORTED
    ):
        errors[BOUNDARY_KEY] = ["the connector cannot define its own transaction boundaries"]
    if config.get(INTERVAL_KEY) not in (None, ""):
        try:
            if int(config[INTERVAL_KEY]) < 0:
                errors[INTERVAL_KEY] = ["must be >= 0"]
        except (TypeError, ValueError):
            errors[INTERVAL_KEY] = ["must be an integer (milliseconds)"]
        if boundary != "interval":
            errors.setdefault(INTERVAL_KEY, []).append(
                f"only used with {BOUNDARY_KEY}=interval; remove it or change the boundary"
            )
    topic = str(config.get(OFFSETS_TOPIC_KEY, "")).strip()
    if topic and not _TOPIC.match(topic):
        errors[OFFSETS_TOPIC_KEY] = [f"{topic!r} is not a legal topic name"]
    return errors
