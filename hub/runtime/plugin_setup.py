"""Building a connector's converters and transform chain from its config and the registry.

Both are built on the task's thread when the task starts, so a bad converter or transform
config fails that task (FAILED with the reason) instead of the worker. The resolution rules
(per-connector ``key.converter``/``value.converter``/``header.converter`` overrides and their
prefixed settings) live in ``hub.converters.config``; transform chains in
``hub.transforms.chain``. A connector without ``transforms`` gets ``IdentityChain``, which
costs nothing per record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from hub.api import ConnectRecord, Converter, HeaderConverter
from hub.runtime.config import WorkerConfig


class Registry(Protocol):
    """The part of ``hub.plugins.registry.PluginRegistry`` the runtime uses."""

    def connectors(self) -> dict[str, type[Any]]: ...
    def transforms(self) -> dict[str, type[Any]]: ...
    def predicates(self) -> dict[str, type[Any]]: ...
    def converters(self) -> dict[str, type[Any]]: ...
    def header_converters(self) -> dict[str, type[Any]]: ...


class Chain(Protocol):
    def apply(self, record: Any) -> Any: ...


class RecordConverters(Protocol):
    @property
    def key(self) -> Converter: ...
    @property
    def value(self) -> Converter: ...
    @property
    def header(self) -> HeaderConverter: ...


class IdentityChain:
    """The chain of a connector without ``transforms``."""

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        return record

    def close(self) -> None:
        pass


def build_converters(
    registry: Registry, worker: WorkerConfig, connector: Mapping[str, Any]
) -> RecordConverters:
    """The connector's key, value and header converters; ConfigError names bad keys."""
    from hub.converters.config import configure_converters

    return configure_converters(worker, connector, registry)


def build_transform_chain(registry: Registry, connector: Mapping[str, Any]) -> Chain:
    """``hub.transforms.chain.TransformChain`` for the config (identity without transforms)."""
    if not str(connector.get("transforms", "")).strip():
        return IdentityChain()
    from hub.transforms.chain import TransformChain

    return TransformChain.from_config(dict(connector), registry)  # type: ignore[no-any-return]


def close_chain(chain: Chain) -> None:
    close = getattr(chain, "close", None)
    if callable(close):
        close()
