"""Config keys of the systems Sluice stands in for, so no known key is silently half-applied.

A Debezium, Confluent or Kafka Connect user POSTs the config they already have. Every key in it
falls in one of five classes, decided by ``UpstreamKeys.check`` (``ConfigModel.parse`` runs it
for a model whose ``upstream_keys`` is set):

* **implemented**: a field of the plugin's model (its alias), or a key family the plugin reads
  itself (``implemented_patterns``, e.g. ``column.mask.with.<n>.chars``): it does what it does
  upstream;
* **equivalent**: an upstream key whose value Sluice's fixed behaviour equals (``time.precision.
  mode=adaptive``): accepted with one of those values, a validation error naming the key and
  the accepted values otherwise;
* **ignored**: a key that only tunes the JVM or client internals upstream (queue sizes, thread
  counts): accepted, with a WARNING naming it each time a config is parsed;
* **known but not implemented**: a validation error naming the key and saying it is not
  supported, so a user never believes a setting took effect when it did not;
* **unknown** (custom keys nobody defines): accepted and ignored, as Kafka Connect does.

The lists are data (facts about the upstream systems, taken from their documentation and
config definitions), one ``UpstreamKeys`` per system, combined with ``|``; each connector's doc
lists what it rejects. Matching is exact on the key; patterns are anchored regexes.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class UpstreamKeys:
    """What one upstream system (or several, merged with ``|``) defines as config keys."""

    system: str
    known: frozenset[str] = frozenset()
    known_patterns: tuple[str, ...] = ()
    implemented_patterns: tuple[str, ...] = ()
    implemented: frozenset[str] = frozenset()
    ignored: Mapping[str, str] = field(default_factory=dict)
    equivalent: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    doc: str = ""

    def __or__(self, other: UpstreamKeys) -> UpstreamKeys:
        """Both systems' keys; the left side's name and doc win (the plugin's own system)."""
        return UpstreamKeys(
            system=self.system,
            known=self.known | other.known,
            known_patterns=self.known_patterns + other.known_patterns,
            implemented_patterns=self.implemented_patterns + other.implemented_patterns,
            implemented=self.implemented | other.implemented,
            ignored={**other.ignored, **self.ignored},
            equivalent={**other.equivalent, **self.equivalent},
            doc=self.doc or other.doc,
        )

    def unsupported_keys(self, implemented: Iterable[str] = ()) -> list[str]:
        """Known keys that are neither implemented, equivalent nor ignored (for the docs)."""
        done = set(implemented) | self.implemented | set(self.ignored) | set(self.equivalent)
        return sorted(k for k in self.known if k not in done and not self._matches_implemented(k))

    def check(
        self, raw: Mapping[str, Any], implemented: Iterable[str]
    ) -> tuple[dict[str, list[str]], list[str]]:
        """(key -> reasons for keys to reject, keys accepted but ignored) of ``raw``."""
        done = set(implemented) | self.implemented
        errors: dict[str, list[str]] = {}
        ignored: list[str] = []
        where = f" (see {self.doc})" if self.doc else ""
        for key, value in raw.items():
            if key in self.ignored:  # even when a field declares it (for forms and docs)
                ignored.append(key)
            elif key in done or self._matches_implemented(key):
                continue
            elif key in self.equivalent:
                allowed = self.equivalent[key]
                if _normal(value) not in {_normal(v) for v in allowed}:
                    shown = " or ".join(allowed)
                    errors[key] = [
                        f"Sluice supports only {key}={shown} (its fixed behaviour); "
                        f"{value!r} is not supported: remove the key or set it to {shown}{where}"
                    ]
            elif key in self.known or any(_full(p, key) for p in self.known_patterns):
                errors[key] = [
                    f"{key} is a {self.system} setting that Sluice does not support; "
                    f"remove it{where}"
                ]
        return errors, ignored

    def warn_ignored(self, owner: str, keys: list[str]) -> None:
        for key in keys:
            log.warning(
                "%s: config key %s is accepted but ignored: in the %s it only tunes %s",
                owner,
                key,
                self.system,
                self.ignored[key],
                extra={"plugin": owner, "key": key},
            )

    def _matches_implemented(self, key: str) -> bool:
        return any(_full(p, key) for p in self.implemented_patterns)


def _normal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip().lower()


_COMPILED: dict[str, re.Pattern[str]] = {}


def _full(pattern: str, key: str) -> bool:
    compiled = _COMPILED.get(pattern)
    if compiled is None:
        compiled = _COMPILED[pattern] = re.compile(pattern)
    return compiled.fullmatch(key) is not None


# -- Kafka Connect's connector-level keys (ConnectorConfig, SourceConnectorConfig,
#    SinkConnectorConfig of Kafka 3.x/4.x), as far as the Sluice runtime implements them ----

_CONNECT_KNOWN = frozenset({
    "name", "connector.class", "tasks.max", "tasks.max.enforce", "key.converter",
    "value.converter", "header.converter", "config.action.reload", "transforms",
    "predicates", "errors.retry.timeout", "errors.retry.delay.max.ms", "errors.tolerance",
    "errors.log.enable", "errors.log.include.messages", "topics", "topics.regex",
    "errors.deadletterqueue.topic.name", "errors.deadletterqueue.topic.replication.factor",
    "errors.deadletterqueue.context.headers.enable", "topic.creation.groups",
    "exactly.once.support", "transaction.boundary", "transaction.boundary.interval.ms",
    "offsets.storage.topic", "connector.plugin.version", "key.converter.plugin.version",
    "value.converter.plugin.version", "header.converter.plugin.version",
})  # fmt: skip
_CONNECT_IMPLEMENTED = frozenset({
    "name", "connector.class", "tasks.max", "tasks.max.enforce", "key.converter",
    "value.converter", "header.converter", "transforms", "predicates", "errors.retry.timeout",
    "errors.retry.delay.max.ms", "errors.tolerance", "errors.log.enable",
    "errors.log.include.messages", "topics", "topics.regex",
    "errors.deadletterqueue.topic.name", "errors.deadletterqueue.topic.replication.factor",
    "errors.deadletterqueue.context.headers.enable",
    "topic.creation.default.partitions", "topic.creation.default.replication.factor",
    "exactly.once.support", "transaction.boundary", "transaction.boundary.interval.ms",
    "offsets.storage.topic",
})  # fmt: skip

KAFKA_CONNECT = UpstreamKeys(
    system="Kafka Connect",
    known=_CONNECT_KNOWN,
    known_patterns=(r"topic\.creation\..+", r"producer\.override\..+", r"admin\.override\..+"),
    implemented=_CONNECT_IMPLEMENTED,
    implemented_patterns=(
        r"(key|value|header)\.converter\.(?!plugin\.version$).+",
        r"transforms\..+",
        r"predicates\..+",
        r"consumer\.override\..+",
    ),
    # Sluice has no config providers, so there is never anything to reload: both values
    # behave the same.
    equivalent={"config.action.reload": ("restart", "none")},
    doc="docs/connectors/config-keys.md",
)
"""Connector-level keys of Kafka Connect. Implemented by the runtime: the common keys
(``tasks.max.enforce`` included, KIP-1004), ``errors.*``, converter and transform settings,
``consumer.override.*`` (sinks), ``topic.creation.default.{partitions,replication.factor}``
and KIP-618's exactly-once source keys (``exactly.once.support``,
``transaction.boundary[.interval.ms]``, ``offsets.storage.topic``). Rejected:
``producer.override.*`` and ``admin.override.*`` (the worker shares one producer and admin
client), topic creation groups and per-topic configs, and plugin versions."""
