"""Config validation and plugin descriptions in Kafka Connect's REST shapes.

``validate`` gathers every problem at once (common connector keys, ``errors.*``, converters,
the transform chain, the plugin's typed model, and ``Connector.validate``) so a user fixes a
config in one round trip; ``config_infos`` renders them as Kafka Connect's ``ConfigInfos``
and ``key_infos`` turns a pydantic model into ``ConfigKeyInfo`` definitions for forms.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import SecretStr

from hub.api import ConfigError, SinkConnector, is_password, validate_config
from hub.api.client_settings import client_setting_errors
from hub.runtime import task_count
from hub.runtime.config import WorkerConfig
from hub.runtime.error_handling import ErrorHandlingConfig
from hub.runtime.errors import NotFoundError
from hub.runtime.exactly_once_config import exactly_once_errors
from hub.runtime.plugin_setup import build_converters, build_transform_chain
from hub.runtime.worker import connector_type, lookup_plugin
from sluice import __version__

# (name, type, default, importance, group, documentation, sink-only: True sinks only,
# None sources only)
COMMON_KEYS: tuple[tuple[str, str, str | None, str, str, str, bool | None], ...] = (
    ("name", "STRING", None, "HIGH", "Common", "Globally unique name of the connector.", False),
    ("connector.class", "STRING", None, "HIGH", "Common", "The connector plugin (name or alias).",
     False),
    ("tasks.max", "INT", "1", "HIGH", "Common",
     "Maximum number of tasks (at most the worker's tasks.max.limit).", False),
    ("tasks.max.enforce", "BOOLEAN", "true", "LOW", "Common",
     "Fail the connector if it generates more tasks than tasks.max (KIP-1004).", False),
    ("topics", "LIST", "", "HIGH", "Common", "Topics to consume (sinks).", True),
    ("topics.regex", "STRING", "", "HIGH", "Common", "Regex of topics to consume (sinks).", True),
    ("key.converter", "CLASS", None, "LOW", "Common", "Overrides the worker's key.converter.",
     False),
    ("value.converter", "CLASS", None, "LOW", "Common", "Overrides the worker's value.converter.",
     False),
    ("header.converter", "CLASS", None, "LOW", "Common", "Overrides header.converter.", False),
    ("transforms", "LIST", "", "LOW", "Transforms", "Aliases of the transforms to apply.", False),
    ("predicates", "LIST", "", "LOW", "Predicates", "Aliases of the predicates used.", False),
    ("errors.retry.timeout", "LONG", "0", "MEDIUM", "Error Handling",
     "Milliseconds to retry a failed operation; -1 forever.", False),
    ("errors.retry.delay.max.ms", "LONG", "60000", "MEDIUM", "Error Handling",
     "Maximum delay between retries.", False),
    ("errors.tolerance", "STRING", "none", "MEDIUM", "Error Handling",
     "none fails the task on a bad record; all skips it.", False),
    ("errors.log.enable", "BOOLEAN", "false", "MEDIUM", "Error Handling",
     "Log each tolerated failure.", False),
    ("errors.log.include.messages", "BOOLEAN", "false", "MEDIUM", "Error Handling",
     "Include the record's position in error logs.", False),
    ("errors.deadletterqueue.topic.name", "STRING", "", "MEDIUM", "Error Handling",
     "Topic for records that failed (sources too).", False),
    ("errors.deadletterqueue.context.headers.enable", "BOOLEAN", "false", "MEDIUM",
     "Error Handling", "Add __connect.errors.* headers to dead-letter records.", False),
    ("exactly.once.support", "STRING", "requested", "MEDIUM", "Exactly Once Support",
     "requested or required (refused unless the connector supports exactly-once).", None),
    ("transaction.boundary", "STRING", "poll", "MEDIUM", "Exactly Once Support",
     "poll, interval or connector: when a source transaction commits.", None),
    ("transaction.boundary.interval.ms", "LONG", "", "LOW", "Exactly Once Support",
     "With transaction.boundary=interval: how long a transaction stays open.", None),
    ("offsets.storage.topic", "STRING", "", "LOW", "Offsets Topic",
     "The connector's own source offsets topic (else the worker's).", None),
)  # fmt: skip


PLUGIN_KINDS = (
    ("transforms", "transformation"),
    ("predicates", "predicate"),
    ("converters", "converter"),
    ("header_converters", "header_converter"),
)


# A Java class name, as tools matching on ``class`` expect: dotted package, class (``$``inner).
_JAVA_CLASS = re.compile(r"^[a-z_][\w]*(\.[a-z_][\w]*)*\.[A-Z][\w$]*$")


def connect_class(cls: type[Any]) -> str:
    """The name ``GET /connector-plugins`` shows in ``class``: the Java class a plugin stands
    in for (its first alias that is one, e.g. ``io.debezium.connector.postgresql.
    PostgresConnector``), else its own name (a plugin with no Java counterpart)."""
    for alias in getattr(cls, "aliases", ()):
        if _JAVA_CLASS.match(alias):
            return str(alias)
    return str(cls.name)


def list_plugins(registry: Any, connectors_only: bool = True) -> list[dict[str, Any]]:
    """``GET /connector-plugins``: each distinct class once, with its Connect plugin type and
    the Java class name in ``class`` (``connect_class``). With ``connectors_only`` false,
    transforms, predicates, converters and header converters follow, as Connect 3.2+ lists
    them (KIP-769): a transform with key and value variants twice, ``...Cast$Key`` and
    ``...Cast$Value``."""
    out = [
        {"class": connect_class(cls), "type": connector_type(cls), "version": _version(cls)}
        for cls in dict.fromkeys(registry.connectors().values())
    ]
    if not connectors_only:
        for method, kind in PLUGIN_KINDS:
            for cls in dict.fromkeys(getattr(registry, method)().values()):
                name = connect_class(cls)
                variants = getattr(cls, "variants", ()) if kind == "transformation" else ()
                for suffix in [f"${v.capitalize()}" for v in variants] or [""]:
                    out.append({"class": name + suffix, "type": kind, "version": _version(cls)})
    return out


def _version(cls: type[Any]) -> str:
    return str(getattr(cls, "version", None) or __version__)


def find_plugin(registry: Any, name: str) -> type[Any]:
    """A plugin of any kind by name or alias; NotFoundError otherwise."""
    for method in ("connectors", *(m for m, _ in PLUGIN_KINDS)):
        cls = lookup_plugin(getattr(registry, method)(), name)
        if cls is not None:
            return cls
    raise NotFoundError(f"Unknown plugin {name}")


def connector_errors(
    registry: Any, worker: WorkerConfig, cls: type[Any], config: Mapping[str, Any]
) -> dict[str, list[str]]:
    """Field -> reasons for everything wrong with a connector config; empty when valid."""
    errors: dict[str, list[str]] = {}

    def add(more: Mapping[str, list[str]]) -> None:
        for key, reasons in more.items():
            errors.setdefault(key, []).extend(r for r in reasons if r not in errors.get(key, []))

    if not str(config.get("name", "")).strip():
        add({"name": ['Missing required configuration "name" which has no default value.']})
    add(task_count.limit_errors(config, worker.tasks_max_limit))
    if issubclass(cls, SinkConnector):
        add(_sink_topic_errors(config))
    for check in (
        lambda: ErrorHandlingConfig.from_connector_config(config),
        lambda: build_converters(registry, worker, config),
        lambda: build_transform_chain(registry, config),
    ):
        try:
            check()
        except ConfigError as exc:
            add(exc.errors or {"config": [str(exc)]})
    add(exactly_once_errors(worker, cls, config))
    add(client_setting_errors(config))  # consumer.override.plugin.library.paths & co
    add(validate_config(cls.config_model, config))
    add(cls.validate(config))
    return errors


def _sink_topic_errors(config: Mapping[str, Any]) -> dict[str, list[str]]:
    topics = [t.strip() for t in str(config.get("topics", "")).split(",") if t.strip()]
    regex = str(config.get("topics.regex", "")).strip()
    if topics and regex:
        reason = "topics and topics.regex are mutually exclusive"
        return {"topics": [reason], "topics.regex": [reason]}
    if not topics and not regex:
        return {"topics": ["Must configure one of topics or topics.regex"]}
    if regex:
        try:
            re.compile(regex)
        except re.error as exc:
            return {"topics.regex": [f"invalid regex: {exc}"]}
    dlq = str(config.get("errors.deadletterqueue.topic.name", "")).strip()
    if dlq and dlq in topics:
        return {"errors.deadletterqueue.topic.name": ["must not be one of the sink's topics"]}
    return {}


def config_infos(
    cls: type[Any], config: Mapping[str, Any], errors: Mapping[str, list[str]]
) -> dict[str, Any]:
    """Kafka Connect's ``ConfigInfos`` for a validated connector config."""
    sink = issubclass(cls, SinkConnector)
    definitions = [
        _key_info(name, typ, default, imp, group, doc, i)
        for i, (name, typ, default, imp, group, doc, sink_only) in enumerate(COMMON_KEYS)
        if (sink and sink_only is not None) or (not sink and not sink_only)
    ]
    seen = {d["name"] for d in definitions}
    definitions += [d for d in key_infos(cls.config_model, cls.name) if d["name"] not in seen]
    seen = {d["name"] for d in definitions}
    for key in errors:
        if key not in seen:  # dynamic keys: transforms.<alias>.<key>, converter settings...
            group = "Transforms" if key.startswith("transforms") else "Common"
            definitions.append(_key_info(key, "STRING", None, "LOW", group, "", len(definitions)))
    configs = []
    for d in definitions:
        value = config.get(d["name"], d["default_value"])
        configs.append(
            {
                "definition": d,
                "value": {
                    "name": d["name"],
                    "value": None if value is None else str(value),
                    "recommended_values": [],
                    "errors": list(errors.get(d["name"], [])),
                    "visible": True,
                },
            }
        )
    return {
        "name": cls.name,
        "error_count": sum(len(c["value"]["errors"]) for c in configs),
        "groups": list(dict.fromkeys(d["group"] for d in definitions)),
        "configs": configs,
    }


def key_infos(model: type[Any], group: str) -> list[dict[str, Any]]:
    """``ConfigKeyInfo`` for each field of a plugin's pydantic config model."""
    out = []
    for i, (name, field) in enumerate(model.model_fields.items()):
        required = field.is_required()
        default = None if required else field.get_default(call_default_factory=True)
        out.append(
            _key_info(
                field.alias or name,
                "PASSWORD" if is_password(field) else _type_name(field.annotation),
                None if default is None else _render(default),
                "HIGH" if required else "MEDIUM",
                group,
                field.description or "",
                i,
                required=required,
                display=field.title,
            )
        )
    return out


def _key_info(
    name: str,
    typ: str,
    default: str | None,
    importance: str,
    group: str,
    doc: str,
    order: int,
    *,
    required: bool | None = None,
    display: str | None = None,
) -> dict[str, Any]:
    return {
        "name": name,
        "type": typ,
        "required": default is None and importance == "HIGH" if required is None else required,
        "default_value": default,
        "importance": importance,
        "documentation": doc,
        "group": group,
        "width": "NONE",
        "display_name": display or name,
        "dependents": [],
        "order": order,
    }


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _type_name(args[0]) if len(args) == 1 else "STRING"
    if origin in (list, tuple, set, frozenset):
        return "LIST"
    if annotation is bool:
        return "BOOLEAN"
    if annotation is int:
        return "INT"
    if annotation is float:
        return "DOUBLE"
    if annotation is SecretStr:
        return "PASSWORD"
    if origin is dict or annotation is dict:
        return "MAP"
    return "STRING"


def _render(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | set | frozenset):
        return ",".join(str(v) for v in value)
    return str(getattr(value, "value", value))
