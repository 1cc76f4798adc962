"""Client quota configs: which limits apply to a (user, client-id) pair, Kafka's precedence.

A quota entity is a user, a client id, or both; either may be the *default* (Kafka's
``<default>``) instead of a name. The configs are Kafka's ``producer_byte_rate``,
``consumer_byte_rate`` (bytes/s) and ``request_percentage`` (percent of one handler's time).
For a connection's (user, client id) the first entity that has the config applies, in Kafka's
order (``ClientQuotaManager``/KIP-55):

1. user + client id         2. user + default client     3. user
4. default user + client id 5. default user + default client   6. default user
7. client id                8. default client

The set is persisted as ``quotas.json`` in the data dir (the whole set rewritten through a
temporary file and a rename on each change, as ``acls.json``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from broker.errors import QuotaError as QuotaError

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
QUOTA_KEYS = frozenset({PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE, REQUEST_PERCENTAGE})

USER = "user"
CLIENT_ID = "client-id"
DEFAULT = object()
"""The ``<default>`` entity name (a None ``entity_name`` on the wire)."""

Name = str | object  # a name, or DEFAULT
Entity = tuple[tuple[str, Name], ...]
"""Sorted ((entity type, name or DEFAULT), ...): ``(("client-id", "app"), ("user", "bob"))``."""

FILE_NAME = "quotas.json"


def entity(**parts: Name | None) -> Entity:
    """``entity(user="bob", client_id=DEFAULT)``; a missing part is not part of the entity."""
    out = []
    for key, value in parts.items():
        if value is not None:
            out.append((key.replace("_", "-"), value))
    return tuple(sorted(out, key=lambda p: p[0]))


def _precedence(user: str, client_id: str) -> list[Entity]:
    return [
        entity(user=user, client_id=client_id),
        entity(user=user, client_id=DEFAULT),
        entity(user=user),
        entity(user=DEFAULT, client_id=client_id),
        entity(user=DEFAULT, client_id=DEFAULT),
        entity(user=DEFAULT),
        entity(client_id=client_id),
        entity(client_id=DEFAULT),
    ]


class ClientQuotas:
    """The quota configs by entity; ``limit`` answers for a connection. Event-loop only."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._configs: dict[Entity, dict[str, float]] = {}
        self._cache: dict[tuple[str, str, str], float | None] = {}
        if path is not None and path.exists():
            self._load(path)

    def __bool__(self) -> bool:
        return bool(self._configs)

    def limit(self, key: str, user: str, client_id: str) -> float | None:
        """The ``key`` quota for this user and client id, or None when none applies."""
        cache_key = (key, user, client_id)
        if cache_key in self._cache:
            return self._cache[cache_key]
        found = None
        for candidate in _precedence(user, client_id):
            value = self._configs.get(candidate, {}).get(key)
            if value is not None:
                found = value
                break
        self._cache[cache_key] = found
        return found

    def entries(self) -> list[tuple[Entity, dict[str, float]]]:
        return [(e, dict(c)) for e, c in self._configs.items() if c]

    def alter(self, target: Entity, ops: Iterable[tuple[str, float, bool]]) -> None:
        """Sets (``remove`` False) or removes each (key, value) of one entity; validated first
        so a bad op changes nothing."""
        validate_entity(target)
        ops = list(ops)
        for key, value, remove in ops:
            if key not in QUOTA_KEYS:
                raise QuotaError(
                    f"unknown quota {key!r}; use one of {', '.join(sorted(QUOTA_KEYS))}"
                )
            if not remove and not value > 0:
                raise QuotaError(f"{key} must be positive, got {value}")
        config = self._configs.setdefault(target, {})
        for key, value, remove in ops:
            if remove:
                config.pop(key, None)
            else:
                config[key] = value
        if not config:
            del self._configs[target]
        self._cache = {}
        self._save()

    def replace_all(self, configs: Mapping[Entity, Mapping[str, float]]) -> None:
        """Takes the cluster's set as is (cluster mode: ZooKeeper changed); not saved again."""
        self._configs = {e: dict(c) for e, c in configs.items() if c}
        self._cache = {}

    def _save(self) -> None:
        if self._path is None:
            return
        data = [
            {"entity": [[t, None if n is DEFAULT else n] for t, n in e], "configs": c}
            for e, c in self._configs.items()
        ]
        tmp = self._path.with_suffix(".json.tmp")
        with open(tmp, "w") as f:
            f.write(json.dumps({"version": 1, "quotas": data}, indent=1))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self._path)

    def _load(self, path: Path) -> None:
        try:
            data = json.loads(path.read_text())
            for item in data["quotas"]:
                key = tuple((str(t), DEFAULT if n is None else str(n)) for t, n in item["entity"])
                self._configs[key] = {str(k): float(v) for k, v in item["configs"].items()}
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path} is not a valid quota file: {exc!r}") from exc


def validate_entity(target: Entity) -> None:
    types = [t for t, _ in target]
    if not types or len(set(types)) != len(types) or not set(types) <= {USER, CLIENT_ID}:
        raise QuotaError(f"a quota entity is a user, a client-id or both; got {types}")
    for _, name in target:
        if name is not DEFAULT and not name:
            raise QuotaError("an entity name must not be empty (null means the default)")


def matches(target: Entity, components: Mapping[str, tuple[int, str | None]], strict: bool) -> bool:
    """DescribeClientQuotas filtering: ``components`` maps entity type -> (match type, match)
    with Kafka's match types 0 EXACT (that name), 1 DEFAULT, 2 SPECIFIED (any name, not the
    default); ``strict`` also requires the entity to have no other parts."""
    parts = dict(target)
    for etype, (match_type, match) in components.items():
        if etype not in parts:
            return False
        name = parts[etype]
        if match_type == 0 and name != match:
            return False
        if match_type == 1 and name is not DEFAULT:
            return False
        if match_type == 2 and name is DEFAULT:
            return False
    return not strict or set(parts) == set(components)
