"""``PluginRegistry``: every plugin class indexed by kind and by each name and alias.

The registry calls the collection hooks lazily and caches the index per kind; registering or
unregistering a plugin drops the caches. Two different classes claiming the same name or alias
within one kind is a ``PluginConflictError`` naming both, raised when the kind is indexed
(``get_plugin_manager`` indexes every kind up front, so conflicts show at start-up). The same
class listed twice (e.g. by two plugins re-exporting it) is not a conflict.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Literal

import pluggy

from hub.api import Connector, Converter, HeaderConverter, Predicate, Transformation
from hub.plugins.errors import (
    InvalidPluginError,
    PluginConflictError,
    PluginError,
    PluginNotFoundError,
)

Kind = Literal["connector", "transform", "predicate", "converter", "header_converter"]
KINDS: tuple[Kind, ...] = ("connector", "transform", "predicate", "converter", "header_converter")
__all__ = [
    "KINDS",
    "InvalidPluginError",
    "PluginConflictError",
    "PluginError",
    "PluginNotFoundError",
    "PluginRegistry",
    "canonical_kind",
    "lookup",
    "lookup_transform",
    "plugin_names",
]

_HOOKS: dict[Kind, str] = {
    "connector": "sluice_connectors",
    "transform": "sluice_transforms",
    "predicate": "sluice_predicates",
    "converter": "sluice_converters",
    "header_converter": "sluice_header_converters",
}

# Spellings callers use for a kind (REST uses "transformation"/"header_converter", code often
# the plural hook name); all map to the canonical singular.
_KIND_SPELLINGS: dict[str, Kind] = {
    **{k: k for k in KINDS},
    **{k + "s": k for k in KINDS},
    "transformation": "transform",
    "transformations": "transform",
    "header-converter": "header_converter",
    "headerconverter": "header_converter",
}

VARIANT_SUFFIXES = {"$Key": "key", "$Value": "value"}


_BASES: dict[Kind, type[Any]] = {
    "connector": Connector,
    "transform": Transformation,
    "predicate": Predicate,
    "converter": Converter,
    "header_converter": HeaderConverter,
}


def _check_class(cls: Any, kind: Kind, hook: str) -> None:
    base = _BASES[kind]
    if not isinstance(cls, type) or not issubclass(cls, base):
        raise InvalidPluginError(f"{hook} returned {cls!r}, which is not a {base.__name__} class")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name.strip():
        raise InvalidPluginError(f"{hook}: {_qualname(cls)} has no 'name' class attribute")


def canonical_kind(kind: str) -> Kind:
    try:
        return _KIND_SPELLINGS[kind.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown plugin kind {kind!r}; expected one of {KINDS}") from None


def plugin_names(cls: type[Any], kind: Kind) -> list[str]:
    """Every name ``cls`` answers to: name, aliases, and ``$Key``/``$Value`` forms."""
    base: list[str] = [cls.name, *getattr(cls, "aliases", ())]
    variants: tuple[str, ...] = getattr(cls, "variants", ())
    if kind == "transform" and variants:
        return base + [n + suffix for n in base for suffix in VARIANT_SUFFIXES]
    return base


def _qualname(cls: type[Any]) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


class PluginRegistry:
    """Name/alias -> class for each plugin kind, over one pluggy ``PluginManager``."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.pm = pm
        self._index: dict[Kind, dict[str, type[Any]]] = {}
        self._lock = threading.RLock()

    def register(self, plugin: object, name: str | None = None) -> None:
        """Registers one more plugin object and re-checks for name conflicts."""
        with self._lock:
            self.pm.register(plugin, name=name)
            self._index.clear()
            try:
                self.check()
            except PluginError:
                self.pm.unregister(plugin)
                self._index.clear()
                raise

    def unregister(self, plugin: object) -> None:
        with self._lock:
            self.pm.unregister(plugin)
            self._index.clear()

    def check(self) -> None:
        """Indexes every kind now, so conflicts surface at start-up rather than on first use."""
        for kind in KINDS:
            self.by_name(kind)

    def by_name(self, kind: str) -> dict[str, type[Any]]:
        """Name-or-alias -> class for ``kind``; a copy, safe to mutate."""
        k = canonical_kind(kind)
        with self._lock:
            if k not in self._index:
                self._index[k] = self._build(k)
            return dict(self._index[k])

    def _build(self, kind: Kind) -> dict[str, type[Any]]:
        hook: Callable[[], list[list[type[Any]] | None]] = getattr(self.pm.hook, _HOOKS[kind])
        index: dict[str, type[Any]] = {}
        for contributed in hook():
            for cls in contributed or ():
                _check_class(cls, kind, _HOOKS[kind])
                for name in plugin_names(cls, kind):
                    other = index.get(name)
                    if other is not None and other is not cls:
                        raise PluginConflictError(
                            f"{kind} name {name!r} is claimed by both {_qualname(other)} and "
                            f"{_qualname(cls)}; uninstall one plugin or change its name/aliases"
                        )
                    index[name] = cls
        return index

    def classes(self, kind: str) -> list[type[Any]]:
        """Each distinct class of ``kind`` once, in registration order."""
        return list(dict.fromkeys(self.by_name(kind).values()))

    def connectors(self) -> dict[str, type[Any]]:
        return self.by_name("connector")

    def transforms(self) -> dict[str, type[Any]]:
        return self.by_name("transform")

    def predicates(self) -> dict[str, type[Any]]:
        return self.by_name("predicate")

    def converters(self) -> dict[str, type[Any]]:
        return self.by_name("converter")

    def header_converters(self) -> dict[str, type[Any]]:
        return self.by_name("header_converter")

    def find(self, kind: str, name: str) -> type[Any]:
        """The class called ``name`` (exact, else case-insensitive); else PluginNotFoundError."""
        return lookup(self.by_name(kind), canonical_kind(kind), name)

    def find_transform(self, name: str) -> tuple[type[Any], str | None]:
        """The transform class and its variant ("key"/"value"/None) for a ``type`` value."""
        return lookup_transform(self.transforms(), name)


def lookup(index: Mapping[str, type[Any]], kind: str, name: str) -> type[Any]:
    """``index[name]``, else a case-insensitive match; PluginNotFoundError listing what exists.

    A plain function over a name -> class dict so callers holding any registry that offers
    the contract's dict methods (``transforms()``, ...) resolve names the same way.
    """
    key = name.strip()
    if key in index:
        return index[key]
    folded = {n.lower(): cls for n, cls in index.items()}
    if key.lower() in folded:
        return folded[key.lower()]
    known = sorted({getattr(c, "name", c.__name__) for c in index.values()})
    raise PluginNotFoundError(
        f"no {kind.replace('_', ' ')} plugin named {name!r}; "
        f"available: {', '.join(known) or 'none'}"
    )


def lookup_transform(index: Mapping[str, type[Any]], name: str) -> tuple[type[Any], str | None]:
    """The transform class and variant for a ``transforms.<t>.type`` value.

    A ``$Key``/``$Value`` suffix picks the variant; a class with variants named without a
    suffix defaults to "value", the common case (Kafka Connect would reject it).
    """
    cls = lookup(index, "transform", name)
    variants = getattr(cls, "variants", ())
    if not variants:
        return cls, None
    for suffix, variant in VARIANT_SUFFIXES.items():
        if name.strip().lower().endswith(suffix.lower()):
            return cls, variant
    return cls, "value" if "value" in variants else variants[0]
