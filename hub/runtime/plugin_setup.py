"""Building a connector's converters and transform chain from its config and the registry.

Converters follow Kafka Connect's override rule: a connector that sets ``value.converter``
gets that class; its settings are the worker's ``value.converter.*`` keys (only when the class
is the worker's) overlaid with the connector's own ``value.converter.*`` keys. The header
converter falls back to a built-in UTF-8/JSON one when the default is not registered, so a
hub without the converters package still moves records with headers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from hub.api import ConfigError, ConnectRecord, Converter, HeaderConverter, SchemaAndValue
from hub.api.schema import Schema
from hub.runtime.config import SIMPLE_HEADER_CONVERTER, WorkerConfig


class Registry(Protocol):
    """The part of ``hub.plugins.registry.PluginRegistry`` the runtime uses."""

    def connectors(self) -> dict[str, type[Any]]: ...
    def transforms(self) -> dict[str, type[Any]]: ...
    def predicates(self) -> dict[str, type[Any]]: ...
    def converters(self) -> dict[str, type[Any]]: ...
    def header_converters(self) -> dict[str, type[Any]]: ...


class Chain(Protocol):
    def apply(self, record: Any) -> Any: ...


@dataclass
class RecordConverters:
    key: Converter
    value: Converter
    header: HeaderConverter


class IdentityChain:
    """The chain of a connector without ``transforms``."""

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        return record

    def close(self) -> None:
        pass


class Utf8HeaderConverter(HeaderConverter):
    """Fallback header converter: str as UTF-8, bytes as-is, anything else as JSON."""

    name = "sluice-fallback-header"

    def from_connect(self, topic: str, key: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is None or isinstance(value, bytes):
            return value
        if isinstance(value, str):
            return value.encode()
        return json.dumps(value, default=str).encode()

    def to_connect(self, topic: str, key: str, data: bytes | None) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(None, None)
        try:
            return SchemaAndValue(None, data.decode())
        except UnicodeDecodeError:
            return SchemaAndValue(None, data)


def _find(index: Mapping[str, type[Any]], name: str, kind: str, key: str) -> type[Any]:
    cls = index.get(name) or {n.lower(): c for n, c in index.items()}.get(name.lower())
    if cls is None:
        raise ConfigError(f"unknown {kind} {name!r}", {key: [f"no {kind} plugin named {name!r}"]})
    return cls


def _settings(worker: WorkerConfig, connector: Mapping[str, Any], key: str) -> dict[str, Any]:
    prefix = key + "."
    settings: dict[str, Any] = {}
    if key not in connector:
        settings.update(worker.prefixed(prefix))
    settings.update({k[len(prefix) :]: v for k, v in connector.items() if k.startswith(prefix)})
    return settings


def build_converters(
    registry: Registry, worker: WorkerConfig, connector: Mapping[str, Any]
) -> RecordConverters:
    """The connector's key, value and header converters; ConfigError on unknown classes."""
    converters = registry.converters()
    made: dict[str, Any] = {}
    for side in ("key", "value"):
        key = f"{side}.converter"
        name = str(connector.get(key) or worker.raw()[key])
        cls = _find(converters, name, "converter", key)
        made[side] = cls(_settings(worker, connector, key), side == "key")
    name = str(connector.get("header.converter") or worker.header_converter)
    headers = registry.header_converters()
    if name == SIMPLE_HEADER_CONVERTER and name not in headers:
        header: HeaderConverter = Utf8HeaderConverter({})
    else:
        cls = _find(headers, name, "header converter", "header.converter")
        header = cls(_settings(worker, connector, "header.converter"))
    return RecordConverters(made["key"], made["value"], header)


def build_transform_chain(registry: Registry, connector: Mapping[str, Any]) -> Chain:
    """``hub.transforms.chain.TransformChain`` for the config (identity without transforms)."""
    if not str(connector.get("transforms", "")).strip():
        return IdentityChain()
    try:
        from hub.transforms.chain import TransformChain
    except ImportError:
        raise ConfigError(
            "transforms are not available", {"transforms": ["hub.transforms is not installed"]}
        ) from None
    return TransformChain.from_config(dict(connector), registry)  # type: ignore[no-any-return]


def close_chain(chain: Chain) -> None:
    close = getattr(chain, "close", None)
    if callable(close):
        close()
