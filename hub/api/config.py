"""Typed configuration models for connectors, transforms, predicates and converters.

A plugin declares its settings as a ``ConfigModel`` (a pydantic model). Kafka Connect's
dotted key names are the field aliases, so a user's existing JSON validates as-is::

    class FileSourceConfig(ConfigModel):
        file: str = Field(description="Path or glob of the files to tail.")
        topic: str
        batch_size: int = Field(2000, alias="batch.size", gt=0)

The same model gives the REST API its validation errors (``validate_config``: field -> reasons,
HTTP 400) and the web console its form (``config_schema``: JSON Schema keyed by alias).
Unknown keys are kept (``extra="allow"``): Kafka Connect configs routinely carry keys meant
for the worker or for transforms, and rejecting them would break existing configs. A model that
stands in for another system's plugin sets ``upstream_keys`` (see ``hub.api.upstream``): then a
key that system defines but the model does not implement is a validation error naming it, never
silently accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from hub.api.errors import ConfigError
from hub.api.upstream import UpstreamKeys


class ConfigModel(BaseModel):
    """Base for every plugin config; field aliases are the user-facing (dotted) names."""

    model_config = ConfigDict(
        populate_by_name=True, extra="allow", frozen=True, str_strip_whitespace=True
    )

    upstream_keys: ClassVar[UpstreamKeys | None] = None
    """Keys of the system this plugin stands in for; None: no such check (see the module)."""

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        """Validates ``raw`` (string values are coerced, as in Kafka Connect's JSON).

        Raises ConfigError whose ``errors`` maps each bad key (its alias) to its reasons,
        including upstream keys the model does not implement (``upstream_keys``).
        """
        upstream: dict[str, list[str]] = {}
        if cls.upstream_keys is not None:
            upstream, ignored = cls.upstream_keys.check(raw, cls.implemented_keys())
            cls.upstream_keys.warn_ignored(cls.__name__, ignored)
        try:
            config = cls.model_validate(dict(raw))
        except ValidationError as exc:
            errors = _field_errors(cls, exc)
            for key, reasons in upstream.items():
                errors.setdefault(key, []).extend(reasons)
            raise ConfigError(f"invalid {cls.__name__}", errors) from None
        if upstream:
            raise ConfigError(f"invalid {cls.__name__}", upstream)
        return config

    @classmethod
    def implemented_keys(cls) -> set[str]:
        """Every key a field of this model reads: aliases, validation aliases and names."""
        keys: set[str] = set()
        for name, info in cls.model_fields.items():
            keys.add(name)
            if info.alias:
                keys.add(info.alias)
            choices = getattr(info.validation_alias, "choices", None)
            if isinstance(info.validation_alias, str):
                keys.add(info.validation_alias)
            elif choices:
                keys.update(c for c in choices if isinstance(c, str))
        return keys

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """JSON Schema of the config, keyed by user-facing names, for forms and docs."""
        return cls.model_json_schema(by_alias=True, mode="validation")

    def raw(self) -> dict[str, Any]:
        """The config back as user-facing keys (aliases), unknown keys included."""
        return self.model_dump(by_alias=True, exclude_none=True)


def validate_config(model: type[ConfigModel], raw: Mapping[str, Any]) -> dict[str, list[str]]:
    """Field -> reasons for every problem in ``raw``; empty when valid."""
    try:
        model.parse(raw)
    except ConfigError as exc:
        return exc.errors
    return {}


def _field_errors(model: type[BaseModel], exc: ValidationError) -> dict[str, list[str]]:
    aliases = {name: (f.alias or name) for name, f in model.model_fields.items()}
    errors: dict[str, list[str]] = {}
    for err in exc.errors():
        loc = err.get("loc") or ("",)
        key = aliases.get(str(loc[0]), str(loc[0]))
        if len(loc) > 1:
            key += "".join(f"[{part}]" for part in loc[1:])
        message = err.get("msg", "invalid value")
        if err.get("type") == "missing":
            message = "Missing required configuration"
        errors.setdefault(key or "config", []).append(message)
    return errors
