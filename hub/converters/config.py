"""Picks and configures a connector's key, value and header converters.

Kafka Connect's keys: ``key.converter``, ``value.converter``, ``header.converter`` name the
class (short name or Java class name), and keys under the same prefix configure it
(``value.converter.schemas.enable=false`` -> ``schemas.enable=false``).

Resolution, per role:

1. The connector config names a class -> that class, configured from the worker's prefixed
   settings only if it is the same class, overlaid with the connector's.
2. Otherwise the worker's class, with the worker's settings overlaid with the connector's
   prefixed ones. (Kafka Connect ignores ``value.converter.schemas.enable`` in a connector
   config that does not repeat ``value.converter``, a classic surprise; Sluice honours it.)
3. Neither: JSON with schemas for keys and values, the simple converter for headers.

``registry`` needs only ``converters()`` and ``header_converters()`` (docs/contracts.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from hub.api import ConfigError, Converter, HeaderConverter
from hub.plugins.errors import PluginNotFoundError
from hub.plugins.registry import lookup

Role = Literal["key", "value", "header"]
DEFAULT_CLASSES: dict[Role, str] = {"key": "json", "value": "json", "header": "simple"}


@dataclass(frozen=True, slots=True)
class Converters:
    key: Converter
    value: Converter
    header: HeaderConverter


def _as_mapping(config: Any) -> Mapping[str, Any]:
    if config is None:
        return {}
    if isinstance(config, Mapping):
        return config
    dump = getattr(config, "model_dump", None)  # a pydantic WorkerConfig
    if dump is not None:
        return dict(dump(by_alias=True, exclude_none=True))
    raise TypeError(f"expected a mapping or a pydantic model, got {type(config).__name__}")


def _sub_settings(config: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)}


def converter_settings(
    role: Role, worker_config: Any, connector_config: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    """(class name, settings without the prefix) for one role, per the rules above."""
    worker = _as_mapping(worker_config)
    key = f"{role}.converter"
    prefix = key + "."
    worker_class = str(worker.get(key) or DEFAULT_CLASSES[role]).strip()
    connector_class = str(connector_config.get(key) or "").strip()
    settings: dict[str, Any] = {}
    if not connector_class or connector_class == worker_class:
        settings.update(_sub_settings(worker, prefix))
    settings.update(_sub_settings(connector_config, prefix))
    return connector_class or worker_class, settings


def _build(role: Role, registry: Any, worker: Any, connector: Mapping[str, Any]) -> Any:
    key = f"{role}.converter"
    class_name, settings = converter_settings(role, worker, connector)
    kind = "header_converter" if role == "header" else "converter"
    index = registry.header_converters() if role == "header" else registry.converters()
    try:
        cls = lookup(index, kind, class_name)
    except PluginNotFoundError as exc:
        raise ConfigError(f"invalid {key}", {key: [str(exc)]}) from None
    try:
        return cls(settings) if role == "header" else cls(settings, role == "key")
    except ConfigError as exc:
        errors = {f"{key}.{field}": reasons for field, reasons in exc.errors.items()}
        raise ConfigError(f"invalid {key} settings", errors or {key: [str(exc)]}) from None


def configure_converters(
    worker_config: Any, connector_config: Mapping[str, Any], registry: Any
) -> Converters:
    """The three converters for one connector; ConfigError names every bad key (all roles)."""
    built: dict[Role, Any] = {}
    errors: dict[str, list[str]] = {}
    for role in ("key", "value", "header"):
        try:
            built[role] = _build(role, registry, worker_config, connector_config)
        except ConfigError as exc:
            errors.update(exc.errors)
    if errors:
        raise ConfigError("invalid converter configuration", errors)
    return Converters(key=built["key"], value=built["value"], header=built["header"])
