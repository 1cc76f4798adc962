"""JSON Schema compatibility: Confluent's ``json/diff`` rules over plain JSON documents.

No Python library judges whether one JSON Schema accepts everything another accepted, so this
follows Confluent's rule set (its "STRICT" policy): schemas are compared structurally, each
change gets a type, and a change outside ``COMPATIBLE`` breaks compatibility. The core is the
*content model* of objects: adding a property is compatible only where the old schema was
closed (``additionalProperties: false``) or covered it, removing one only where the new
schema is open; a new required property needs a default; constraints may only be relaxed
(``maxLength`` up, ``minimum`` down, ``enum`` extended, ``number`` replacing ``integer``...).

Covered: types and type unions, ``$ref`` (local pointers and references by name), objects
(properties, required, additionalProperties, patternProperties, min/maxProperties),
arrays (items as schema or tuple, additionalItems, min/maxItems, uniqueItems), strings,
numbers, enum, const, allOf/anyOf/oneOf, not. Not covered: ``dependencies``/
``dependentSchemas``, ``unevaluated*``, ``contains`` limits (changes there are ignored).

(~480 lines on purpose: one recursive comparison whose per-keyword rules call back into it;
split across modules they would only import each other.)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from schema_registry.formats import _json_nodes as nodes

COMPATIBLE = frozenset({
    "ID_CHANGED", "DESCRIPTION_CHANGED", "TITLE_CHANGED", "DEFAULT_CHANGED", "SCHEMA_REMOVED",
    "TYPE_EXTENDED", "MAX_LENGTH_INCREASED", "MAX_LENGTH_REMOVED", "MIN_LENGTH_DECREASED",
    "MIN_LENGTH_REMOVED", "PATTERN_REMOVED", "MAXIMUM_INCREASED", "MAXIMUM_REMOVED",
    "MINIMUM_DECREASED", "MINIMUM_REMOVED", "EXCLUSIVE_MAXIMUM_INCREASED",
    "EXCLUSIVE_MAXIMUM_REMOVED", "EXCLUSIVE_MINIMUM_DECREASED", "EXCLUSIVE_MINIMUM_REMOVED",
    "MULTIPLE_OF_REDUCED", "MULTIPLE_OF_REMOVED", "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED",
    "REQUIRED_ATTRIBUTE_REMOVED", "MAX_PROPERTIES_INCREASED", "MAX_PROPERTIES_REMOVED",
    "MIN_PROPERTIES_DECREASED", "MIN_PROPERTIES_REMOVED", "ADDITIONAL_PROPERTIES_ADDED",
    "ADDITIONAL_PROPERTIES_EXTENDED", "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL",
    "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL",
    "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL",
    "PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL",
    "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL",
    "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", "MAX_ITEMS_INCREASED",
    "MAX_ITEMS_REMOVED", "MIN_ITEMS_DECREASED", "MIN_ITEMS_REMOVED", "UNIQUE_ITEMS_REMOVED",
    "ADDITIONAL_ITEMS_ADDED", "ADDITIONAL_ITEMS_EXTENDED",
    "ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL", "ITEM_ADDED_TO_CLOSED_CONTENT_MODEL",
    "ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL",
    "ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    "ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", "ENUM_ARRAY_EXTENDED",
    "COMBINED_TYPE_EXTENDED", "PRODUCT_TYPE_NARROWED", "SUM_TYPE_EXTENDED", "NOT_TYPE_NARROWED",
})  # fmt: skip


Resolver = Callable[[str, Any], Any]  # ($ref, the document it appears in) -> (schema, doc)


@dataclass(frozen=True, slots=True)
class Difference:
    type: str
    path: str

    @property
    def compatible(self) -> bool:
        return self.type in COMPATIBLE


class _Diff:
    def __init__(self, resolve: Resolver) -> None:
        self.resolve = resolve
        self.out: list[Difference] = []
        self._active: set[tuple[int, int]] = set()

    def add(self, kind: str, path: str) -> None:
        self.out.append(Difference(kind, path or "#/"))

    def sub(self) -> _Diff:
        child = _Diff(self.resolve)
        child._active = self._active
        return child

    def compatible(self) -> bool:
        return all(d.compatible for d in self.out)

    def node(self, schema: Any, doc: Any) -> nodes.Node:
        seen = 0
        while isinstance(schema, dict) and "$ref" in schema and seen < 64:
            schema, doc = self.resolve(schema["$ref"], doc)
            seen += 1
        return nodes.Node(nodes.kind_of(schema), schema, doc)

    def compare(self, path: str, o: Any, u: Any, odoc: Any, udoc: Any) -> None:
        if o is None and u is None:
            return
        if o is None:
            self.add("SCHEMA_ADDED", path)
            return
        if u is None:
            self.add("SCHEMA_REMOVED", path)
            return
        on, un = self.node(o, odoc), self.node(u, udoc)
        key = (id(on.raw), id(un.raw))
        if key in self._active:  # a recursive schema: this pair is being compared above
            return
        self._active.add(key)
        try:
            self._types(path, on, un)
        finally:
            self._active.discard(key)

    def _types(self, path: str, o: nodes.Node, u: nodes.Node) -> None:
        if o.kind != "combined" and u.kind == "combined":
            members = nodes.members(u)
            if len(members) == 1:
                sub = self.sub()
                sub.compare(path, o.raw, members[0], o.doc, u.doc)
                if sub.compatible():
                    self.out += sub.out
                    return
            elif nodes.criterion_of(u) in ("anyOf", "oneOf"):
                for member in members:
                    sub = self.sub()
                    sub.compare(path, o.raw, member, o.doc, u.doc)
                    if sub.compatible():
                        self.out += sub.out
                        self.add("SUM_TYPE_EXTENDED", path)
                        return
        elif o.kind == "combined" and u.kind != "combined":
            members = nodes.members(o)
            if len(members) == 1:
                sub = self.sub()
                sub.compare(path, members[0], u.raw, o.doc, u.doc)
                if sub.compatible():
                    self.out += sub.out
                    return
            elif nodes.criterion_of(o) == "allOf":
                for member in members:
                    sub = self.sub()
                    sub.compare(path, member, u.raw, o.doc, u.doc)
                    if sub.compatible():
                        self.out += sub.out
                        self.add("PRODUCT_TYPE_NARROWED", path)
                        return
        if o.kind != u.kind:
            if o.kind == "false" or u.kind == "empty":
                return
            if o.get("connect.type") == "bytes" and u.get("connect.type") == "bytes":
                return
            self.add("TYPE_CHANGED", path)
            return
        for attr, change in (("$id", "ID_CHANGED"), ("title", "TITLE_CHANGED"),
                             ("description", "DESCRIPTION_CHANGED"),
                             ("default", "DEFAULT_CHANGED")):  # fmt: skip
            if o.get(attr) != u.get(attr):
                self.add(change, path)
        getattr(self, f"_{o.kind}", lambda *_: None)(path, o, u)

    def _string(self, path: str, o: nodes.Node, u: nodes.Node) -> None:
        _limit(self, path, "maxLength", o, u, up_ok=True)
        _limit(self, path, "minLength", o, u, up_ok=False)
        if o.get("pattern") != u.get("pattern"):
            kind = (
                "PATTERN_ADDED"
                if o.get("pattern") is None
                else "PATTERN_REMOVED"
                if u.get("pattern") is None
                else "PATTERN_CHANGED"
            )
            self.add(kind, f"{path}/pattern")

    def _number(self, path: str, o: nodes.Node, u: nodes.Node) -> None:
        _limit(self, path, "maximum", o, u, up_ok=True)
        _limit(self, path, "minimum", o, u, up_ok=False)
        _limit(self, path, "exclusiveMaximum", o, u, up_ok=True)
        _limit(self, path, "exclusiveMinimum", o, u, up_ok=False)
        om, um = o.get("multipleOf"), u.get("multipleOf")
        if om != um:
            if om is None:
                self.add("MULTIPLE_OF_ADDED", f"{path}/multipleOf")
            elif um is None:
                self.add("MULTIPLE_OF_REMOVED", f"{path}/multipleOf")
            else:
                dom, dum = Decimal(str(om)), Decimal(str(um))
                if dom and dum % dom == 0:
                    self.add("MULTIPLE_OF_EXPANDED", f"{path}/multipleOf")
                elif dum and dom % dum == 0:
                    self.add("MULTIPLE_OF_REDUCED", f"{path}/multipleOf")
                else:
                    self.add("MULTIPLE_OF_CHANGED", f"{path}/multipleOf")
        oi, ui = nodes.is_integer(o), nodes.is_integer(u)
        if oi != ui:
            self.add("TYPE_EXTENDED" if oi else "TYPE_NARROWED", path)

    def _enum(self, path: str, o: nodes.Node, u: nodes.Node) -> None:
        ov, uv = o.get("enum") or [], u.get("enum") or []
        if ov != uv:
            if all(v in uv for v in ov):
                self.add("ENUM_ARRAY_EXTENDED", f"{path}/enum")
            elif all(v in ov for v in uv):
                self.add("ENUM_ARRAY_NARROWED", f"{path}/enum")
            else:
                self.add("ENUM_ARRAY_CHANGED", f"{path}/enum")

    def _const(self, path: str, o: nodes.Node, u: nodes.Node) -> None:
        if o.get("const") != u.get("const"):
            self.add("CONST_CHANGED", path)

    def _not(self, path: str, o: nodes.Node, u: nodes.Node) -> None:
        sub = self.sub()
        sub.compare(f"{path}/not", u.get("not"), o.get("not"), u.doc, o.doc)  # reversed
        self.add("NOT_TYPE_NARROWED" if sub.compatible() else "NOT_TYPE_EXTENDED", path)

    def _combined(self, path: str, o: nodes.Node, u: nodes.Node) -> None:
        oc, uc = nodes.criterion_of(o), nodes.criterion_of(u)
        om, um = nodes.members(o), nodes.members(u)
        if oc != uc:
            if (
                uc == "anyOf"
                or (len(om) == 1 and len(um) == 1)
                or (len(om) == 1 and uc == "oneOf")
                or (len(um) == 1 and oc == "allOf")
            ):
                self.add("COMBINED_TYPE_EXTENDED", path)
            else:
                self.add("COMBINED_TYPE_CHANGED", path)
                return
        if len(om) < len(um):
            self.add("PRODUCT_TYPE_EXTENDED" if uc == "allOf" else "SUM_TYPE_EXTENDED", path)
        elif len(om) > len(um):
            self.add("SUM_TYPE_NARROWED" if oc in ("anyOf", "oneOf") else "PRODUCT_TYPE_NARROWED",
                     path)  # fmt: skip
        edges: dict[int, list[tuple[int, list[Difference]]]] = {}
        for i, a in enumerate(om):
            for j, b in enumerate(um):
                sub = self.sub()
                sub.compare(f"{path}/{oc}/{i}", a, b, o.doc, u.doc)
                if sub.compatible():
                    edges.setdefault(i, []).append((j, sub.out))
        matching = nodes.max_matching(edges)
        for _j, diffs in matching.values():
            self.out += diffs
        if len(matching) < min(len(om), len(um)):
            self.add("COMBINED_TYPE_SUBSCHEMAS_CHANGED", path)

    def _array(self, path: str, o: nodes.Node, u: nodes.Node) -> None:
        oi, ui = o.get("items"), u.get("items")
        if not isinstance(oi, list) and not isinstance(ui, list):
            self.compare(f"{path}/items", oi, ui, o.doc, u.doc)
        else:
            ol, ul = (oi if isinstance(oi, list) else []), (ui if isinstance(ui, list) else [])
            for k in range(min(len(ol), len(ul))):
                self.compare(f"{path}/items/{k}", ol[k], ul[k], o.doc, u.doc)
            for k in range(len(ol), len(ul)):
                self.add("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL"
                         if u.get("additionalItems") is False or o.get("additionalItems") is False
                         else "ITEM_ADDED_TO_OPEN_CONTENT_MODEL", f"{path}/items/{k}")  # fmt: skip
            for k in range(len(ul), len(ol)):
                shut = u.get("additionalItems") is False
                kind = "CLOSED" if shut else "OPEN"
                self.add(f"ITEM_REMOVED_FROM_{kind}_CONTENT_MODEL", f"{path}/items/{k}")
        oa, ua = o.get("additionalItems"), u.get("additionalItems")
        if (oa is not False) != (ua is not False):
            self.add("ADDITIONAL_ITEMS_REMOVED" if oa is not False else "ADDITIONAL_ITEMS_ADDED",
                     f"{path}/additionalItems")  # fmt: skip
        elif isinstance(ua, dict) and not isinstance(oa, dict):
            self.add("ADDITIONAL_ITEMS_NARROWED", f"{path}/additionalItems")
        elif isinstance(oa, dict) and not isinstance(ua, dict):
            self.add("ADDITIONAL_ITEMS_EXTENDED", f"{path}/additionalItems")
        elif isinstance(oa, dict) and isinstance(ua, dict):
            self.compare(f"{path}/additionalItems", oa, ua, o.doc, u.doc)
        _limit(self, path, "maxItems", o, u, up_ok=True)
        _limit(self, path, "minItems", o, u, up_ok=False)
        if bool(o.get("uniqueItems")) != bool(u.get("uniqueItems")):
            self.add("UNIQUE_ITEMS_REMOVED" if o.get("uniqueItems") else "UNIQUE_ITEMS_ADDED",
                     f"{path}/uniqueItems")  # fmt: skip

    def _object(self, path: str, o: nodes.Node, u: nodes.Node) -> None:
        op, up = o.get("properties") or {}, u.get("properties") or {}
        oreq, ureq = set(o.get("required") or []), set(u.get("required") or [])
        for name in op:
            if name in up and (name in oreq) != (name in ureq):
                if name in oreq:
                    self.add("REQUIRED_ATTRIBUTE_REMOVED", f"{path}/required/{name}")
                else:
                    kind = ("REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED" if nodes.has_default(up[name])
                            else "REQUIRED_ATTRIBUTE_ADDED")  # fmt: skip
                    self.add(kind, f"{path}/required/{name}")
        for name in sorted(set(op) | set(up)):
            where = f"{path}/properties/{name}"
            if name not in up:
                if nodes.is_open(u):
                    self.add("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL", where)
                    continue
                partial = nodes.partial(u, name)
                if partial is not None:
                    sub = self.sub()
                    sub.compare(where, op[name], partial, o.doc, u.doc)
                    self.out += sub.out
                    self.add("PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                             if sub.compatible() else
                             "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                             where)  # fmt: skip
                elif op[name] is False:
                    self.add("PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", where)
                else:
                    self.add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", where)
            elif name not in op:
                if nodes.is_open(o):
                    if nodes.kind_of(up[name]) == "empty":
                        self.add("PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL", where)
                    elif name in ureq:
                        kind = ("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL"
                                if nodes.has_default(up[name]) else
                                "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL")  # fmt: skip
                        self.add(kind, where)
                    else:
                        self.add("OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", where)
                    continue
                partial = nodes.partial(o, name)
                if partial is not None:
                    sub = self.sub()
                    sub.compare(where, partial, up[name], o.doc, u.doc)
                    self.out += sub.out
                    self.add("PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                             if sub.compatible() else
                             "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                             where)  # fmt: skip
                if name in ureq:
                    self.add("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL"
                             if nodes.has_default(up[name]) else
                             "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", where)  # fmt: skip
                else:
                    self.add("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", where)
            else:
                self.compare(where, op[name], up[name], o.doc, u.doc)
        oa, ua = o.get("additionalProperties", True), u.get("additionalProperties", True)
        where = f"{path}/additionalProperties"
        if (oa is not False) != (ua is not False):
            self.add("ADDITIONAL_PROPERTIES_ADDED" if ua is not False
                     else "ADDITIONAL_PROPERTIES_REMOVED", where)  # fmt: skip
        elif isinstance(ua, dict) and not isinstance(oa, dict):
            self.add("ADDITIONAL_PROPERTIES_NARROWED", where)
        elif isinstance(oa, dict) and not isinstance(ua, dict):
            self.add("ADDITIONAL_PROPERTIES_EXTENDED", where)
        elif isinstance(oa, dict) and isinstance(ua, dict):
            self.compare(where, oa, ua, o.doc, u.doc)
        _limit(self, path, "maxProperties", o, u, up_ok=True)
        _limit(self, path, "minProperties", o, u, up_ok=False)


def _limit(diff: _Diff, path: str, key: str, o: nodes.Node, u: nodes.Node, up_ok: bool) -> None:
    """MAX_LENGTH_ADDED/_REMOVED/_INCREASED/_DECREASED style changes of a numeric keyword."""
    ov, uv = o.get(key), u.get(key)
    if isinstance(ov, bool) or isinstance(uv, bool):  # draft-4 boolean exclusive limits
        ov = uv = None
    if ov == uv:
        return
    stem = re.sub(r"(?<!^)(?=[A-Z])", "_", key).upper()
    if ov is None:
        change = "ADDED"
    elif uv is None:
        change = "REMOVED"
    elif stem.startswith(("MIN", "EXCLUSIVE_MIN")):
        change = "DECREASED" if uv < ov else "INCREASED"
    else:
        change = "INCREASED" if uv > ov else "DECREASED"
    diff.add(f"{stem}_{change}", f"{path}/{key}")


def differences(original: Any, update: Any, resolve: Resolver) -> list[Difference]:
    diff = _Diff(resolve)
    diff.compare("#", original, update, original, update)
    return diff.out
