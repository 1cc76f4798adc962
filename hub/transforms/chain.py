"""``TransformChain``: a connector's transforms, built from its Kafka Connect style config.

Keys read (everything else is ignored)::

    transforms                       comma list of transform aliases, applied in order
    transforms.<t>.type              name, alias or Java class (with $Key/$Value)
    transforms.<t>.predicate         optional: alias of a predicate from `predicates`
    transforms.<t>.negate            optional: true applies <t> where the predicate is false
    transforms.<t>.<setting>         the transform's own settings (its config_model)
    predicates                       comma list of predicate aliases
    predicates.<p>.type              name, alias or Java class
    predicates.<p>.<setting>         the predicate's own settings

``registry`` needs only ``transforms()`` and ``predicates()`` (name -> class dicts), as in
docs/contracts.md. All problems are collected and raised together as one ConfigError whose
fields are the full keys (``transforms.mask.fields``), so the REST API reports each at once.

A chain belongs to one task and runs on that task's thread only: transforms cache derived
schemas without locks.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic

from hub.api import ConfigError, Predicate, Transformation
from hub.plugins.errors import PluginNotFoundError
from hub.plugins.registry import lookup, lookup_transform
from hub.transforms._util import R, split_list

log = logging.getLogger(__name__)

_RESERVED = frozenset({"type", "predicate", "negate"})


@dataclass(frozen=True, slots=True)
class ChainStep(Generic[R]):
    alias: str
    transform: Transformation[R]
    predicate: Predicate[R] | None = None
    negate: bool = False

    def applies_to(self, record: R) -> bool:
        return self.predicate is None or self.predicate.test(record) != self.negate


def _settings(config: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {
        k[len(prefix) :]: v
        for k, v in config.items()
        if k.startswith(prefix) and k[len(prefix) :] not in _RESERVED
    }


def _parse_bool(raw: Any) -> bool | None:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    return {"true": True, "false": False}.get(text)


def _aliases(config: Mapping[str, Any], key: str, errors: dict[str, list[str]]) -> list[str]:
    aliases = split_list(config.get(key))
    duplicates = sorted({a for a in aliases if aliases.count(a) > 1})
    if duplicates:
        errors.setdefault(key, []).append(f"duplicate aliases: {', '.join(duplicates)}")
    return list(dict.fromkeys(aliases))


def _instantiate(
    cls: type[Any], raw: Mapping[str, Any], prefix: str, errors: dict[str, list[str]], **kw: Any
) -> Any:
    try:
        return cls(cls.config_model.parse(raw), **kw)
    except ConfigError as exc:
        for field, reasons in (exc.errors or {"type": [str(exc)]}).items():
            errors.setdefault(prefix + field, []).extend(reasons)
        return None


class TransformChain(Generic[R]):
    """Applies each step in order; a step whose predicate rejects a record is skipped."""

    def __init__(self, steps: list[ChainStep[R]]) -> None:
        self.steps = steps

    def __len__(self) -> int:
        return len(self.steps)

    @classmethod
    def from_config(cls, connector_config: Mapping[str, Any], registry: Any) -> TransformChain[R]:
        errors: dict[str, list[str]] = {}
        predicates = cls._predicates(connector_config, registry, errors)
        steps: list[ChainStep[R]] = []
        for alias in _aliases(connector_config, "transforms", errors):
            prefix = f"transforms.{alias}."
            step = cls._step(connector_config, registry, alias, prefix, predicates, errors)
            if step is not None:
                steps.append(step)
        if errors:
            raise ConfigError("invalid transforms configuration", errors)
        return cls(steps)

    @staticmethod
    def _predicates(
        config: Mapping[str, Any], registry: Any, errors: dict[str, list[str]]
    ) -> dict[str, Predicate[Any] | None]:
        built: dict[str, Predicate[Any] | None] = {}
        for alias in _aliases(config, "predicates", errors):
            prefix = f"predicates.{alias}."
            type_name = str(config.get(prefix + "type") or "").strip()
            built[alias] = None
            if not type_name:
                errors.setdefault(prefix + "type", []).append("Missing required configuration")
                continue
            try:
                pcls = lookup(registry.predicates(), "predicate", type_name)
            except PluginNotFoundError as exc:
                errors.setdefault(prefix + "type", []).append(str(exc))
                continue
            built[alias] = _instantiate(pcls, _settings(config, prefix), prefix, errors)
        return built

    @staticmethod
    def _step(
        config: Mapping[str, Any],
        registry: Any,
        alias: str,
        prefix: str,
        predicates: Mapping[str, Predicate[Any] | None],
        errors: dict[str, list[str]],
    ) -> ChainStep[Any] | None:
        type_name = str(config.get(prefix + "type") or "").strip()
        transform = None
        if not type_name:
            errors.setdefault(prefix + "type", []).append("Missing required configuration")
        else:
            try:
                tcls, variant = lookup_transform(registry.transforms(), type_name)
            except PluginNotFoundError as exc:
                errors.setdefault(prefix + "type", []).append(str(exc))
            else:
                settings = _settings(config, prefix)
                transform = _instantiate(tcls, settings, prefix, errors, variant=variant)
        predicate_alias = str(config.get(prefix + "predicate") or "").strip()
        negate = _parse_bool(config.get(prefix + "negate", False))
        if negate is None:
            errors.setdefault(prefix + "negate", []).append("must be true or false")
        if predicate_alias and predicate_alias not in predicates:
            errors.setdefault(prefix + "predicate", []).append(
                f"predicate {predicate_alias!r} is not listed in 'predicates'"
            )
        if negate and not predicate_alias:
            errors.setdefault(prefix + "negate", []).append("negate needs a predicate")
        if transform is None or negate is None:
            return None
        predicate = predicates.get(predicate_alias) if predicate_alias else None
        return ChainStep(alias, transform, predicate, negate)

    def apply(self, record: R) -> R | None:
        """The record after every applicable step, or None once a step drops it."""
        current: R | None = record
        for step in self.steps:
            if step.applies_to(current):  # type: ignore[arg-type]
                current = step.transform.apply(current)  # type: ignore[arg-type]
                if current is None:
                    return None
        return current

    def close(self) -> None:
        for step in self.steps:
            try:
                step.transform.close()
            except Exception:  # one bad close must not leak the others
                log.exception("closing transform %s failed", step.alias)
