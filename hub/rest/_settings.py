"""Reads worker settings by their Kafka Connect key, whatever shape the worker config has.

``WorkerConfig`` is a pydantic model whose aliases are the dotted Kafka Connect keys
(``rest.auth.token``); its attribute names are snake_case. Looking keys up by alias keeps the
REST layer independent of how the runtime names its attributes, and lets tests pass a plain
mapping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def setting(worker_config: Any, key: str, default: Any = None) -> Any:
    """The value of the dotted ``key`` (e.g. ``rest.host.name``), or ``default`` when unset."""
    if worker_config is None:
        return default
    if isinstance(worker_config, Mapping):
        value = worker_config.get(key, default)
        return default if value is None else value
    dump = getattr(worker_config, "model_dump", None)
    if callable(dump):
        values = dump(by_alias=True)
        if key in values:
            return default if values[key] is None else values[key]
    value = getattr(worker_config, key.replace(".", "_"), None)
    if value is None:
        return default
    # pydantic SecretStr keeps tokens out of reprs; we need the raw text to compare.
    reveal = getattr(value, "get_secret_value", None)
    return reveal() if callable(reveal) else value


def secret(worker_config: Any, key: str) -> str | None:
    """A secret setting as plain text (unwrapping pydantic ``SecretStr``), None when empty."""
    value = setting(worker_config, key)
    reveal = getattr(value, "get_secret_value", None)
    if callable(reveal):
        value = reveal()
    return str(value) if value else None
