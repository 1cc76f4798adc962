"""Entity classes for the API versions kio does not carry (the ones Kafka 4 dropped, KIP-896).

kio 0.6.5 is generated from Kafka 4's message schemas, so its oldest Produce is v3, Fetch v4,
ListOffsets v1, OffsetCommit v2, OffsetFetch v1, CreateTopics v2, DeleteTopics v1,
DescribeConfigs v1 and DescribeLogDirs v1. Kafka 3.x brokers still serve the older versions and
clients in wide use send them, so the broker serves them too.

Each old version differs from kio's oldest one by a few fields. Rather than writing every class
by hand, a class is *derived* from kio's: the same field names, types and wire metadata, minus
the fields the old version lacks, plus the few it has that later versions removed (ListOffsets
v0's ``max_num_offsets``, OffsetCommit v1's ``commit_timestamp``, ...). Field names follow kio,
so handlers read an old request and build an old response exactly as they do for newer
versions (``_entities.build`` drops what a version does not have). The layouts are those of
Kafka 3.x's ``clients/src/main/resources/common/message/*.json`` (all non-flexible);
tests/broker/protocol/test_legacy_schemas.py checks every class against kafka-python's own
encoders of these versions.

``_entities.nested`` finds a derived class's nested classes through ``__legacy_nested__``
(kio's are found through their module, one module per version). The nested classes of a dropped
field stay in that table (DescribeConfigs v0 has no synonyms, but the handler may still look up
``DescribeConfigsSynonym``; ``build`` then drops the field), so handlers need no version checks.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from kio.index import load_request_schema, load_response_schema
from kio.static.primitive import i16, i32, i64

_REQUEST, _RESPONSE = "request", "response"


@dataclass(frozen=True)
class _Added:
    """A field the old version has and kio's oldest does not, placed after ``after``."""

    after: str
    name: str
    kafka_type: str
    python_type: Any


@dataclass(frozen=True)
class _Edit:
    """How one entity (by kio class name) of the old version differs from kio's oldest."""

    drop: frozenset[str] = frozenset()
    add: tuple[_Added, ...] = ()


@dataclass(frozen=True)
class _Legacy:
    api_key: int
    kind: str
    versions: range
    base: int  # kio's oldest version of this API, which the old ones are derived from
    edits: Mapping[str, _Edit] = field(default_factory=dict)


def _drop(*names: str) -> _Edit:
    return _Edit(drop=frozenset(names))


_NO_THROTTLE = _drop("throttle_time")

_LEGACY: tuple[_Legacy, ...] = (
    # Produce: v0-v2 carry message sets of magic 0/1 (converted by broker.log.legacy).
    _Legacy(0, _REQUEST, range(0, 3), 3, {"ProduceRequest": _drop("transactional_id")}),
    _Legacy(0, _RESPONSE, range(2, 3), 3),
    _Legacy(0, _RESPONSE, range(1, 2), 3, {"PartitionProduceResponse": _drop("log_append_time")}),
    _Legacy(0, _RESPONSE, range(0, 1), 3, {
        "PartitionProduceResponse": _drop("log_append_time"), "ProduceResponse": _NO_THROTTLE,
    }),
    # Fetch: v3 added max_bytes, v4 isolation_level, last_stable_offset, aborted_transactions.
    _Legacy(1, _REQUEST, range(3, 4), 4, {"FetchRequest": _drop("isolation_level")}),
    _Legacy(1, _REQUEST, range(0, 3), 4, {"FetchRequest": _drop("isolation_level", "max_bytes")}),
    _Legacy(1, _RESPONSE, range(1, 4), 4, {
        "PartitionData": _drop("last_stable_offset", "aborted_transactions"),
    }),
    _Legacy(1, _RESPONSE, range(0, 1), 4, {
        "PartitionData": _drop("last_stable_offset", "aborted_transactions"),
        "FetchResponse": _NO_THROTTLE,
    }),
    # ListOffsets v0: up to max_num_offsets offsets per partition, newest first.
    _Legacy(2, _REQUEST, range(0, 1), 1, {"ListOffsetsPartition": _Edit(add=(
        _Added("timestamp", "max_num_offsets", "int32", i32),
    ))}),
    _Legacy(2, _RESPONSE, range(0, 1), 1, {"ListOffsetsPartitionResponse": _Edit(
        drop=frozenset({"timestamp", "offset"}),
        add=(_Added("error_code", "old_style_offsets", "int64", tuple[i64, ...]),),
    )}),
    # OffsetCommit: v1 has a per-partition commit_timestamp, v2 replaced it by retention_time;
    # v0 commits outside group membership (no generation, no member id).
    _Legacy(8, _REQUEST, range(1, 2), 2, {
        "OffsetCommitRequest": _drop("retention_time"),
        "OffsetCommitRequestPartition": _Edit(add=(
            _Added("committed_offset", "commit_timestamp", "int64", i64),
        )),
    }),
    _Legacy(8, _REQUEST, range(0, 1), 2, {"OffsetCommitRequest": _drop(
        "retention_time", "generation_id_or_member_epoch", "member_id",
    )}),
    _Legacy(8, _RESPONSE, range(0, 2), 2),
    _Legacy(9, _REQUEST, range(0, 1), 1),
    _Legacy(9, _RESPONSE, range(0, 1), 1),
    # CreateTopics: v1 added validate_only and error_message, v2 throttle_time.
    _Legacy(19, _REQUEST, range(1, 2), 2),
    _Legacy(19, _REQUEST, range(0, 1), 2, {"CreateTopicsRequest": _drop("validate_only")}),
    _Legacy(19, _RESPONSE, range(1, 2), 2, {"CreateTopicsResponse": _NO_THROTTLE}),
    _Legacy(19, _RESPONSE, range(0, 1), 2, {
        "CreateTopicsResponse": _NO_THROTTLE, "CreatableTopicResult": _drop("error_message"),
    }),
    _Legacy(20, _REQUEST, range(0, 1), 1),
    _Legacy(20, _RESPONSE, range(0, 1), 1, {"DeleteTopicsResponse": _NO_THROTTLE}),
    # DescribeConfigs v0: is_default instead of config_source, no synonyms.
    _Legacy(32, _REQUEST, range(0, 1), 1, {"DescribeConfigsRequest": _drop("include_synonyms")}),
    _Legacy(32, _RESPONSE, range(0, 1), 1, {"DescribeConfigsResourceResult": _Edit(
        drop=frozenset({"config_source", "synonyms"}),
        add=(_Added("read_only", "is_default", "bool", bool),),
    )}),
    _Legacy(35, _REQUEST, range(0, 1), 1),
    _Legacy(35, _RESPONSE, range(0, 1), 1),
)  # fmt: skip

_TABLE: dict[tuple[int, str, int], _Legacy] = {
    (spec.api_key, spec.kind, version): spec for spec in _LEGACY for version in spec.versions
}


@cache
def load_request(api_key: int, version: int) -> Any:
    """The request entity class: kio's, or a derived one for the versions kio lacks."""
    spec = _TABLE.get((api_key, _REQUEST, version))
    if spec is None:
        return load_request_schema(api_key, version)
    return _derive_all(load_request_schema(api_key, spec.base), version, spec)


@cache
def load_response(api_key: int, version: int) -> Any:
    """The response entity class: kio's, or a derived one for the versions kio lacks."""
    spec = _TABLE.get((api_key, _RESPONSE, version))
    if spec is None:
        return load_response_schema(api_key, version)
    return _derive_all(load_response_schema(api_key, spec.base), version, spec)


def _derive_all(base: Any, version: int, spec: _Legacy) -> Any:
    built: dict[str, Any] = {}
    top = _derive(base, version, spec.edits, built)
    unused = set(spec.edits) - set(built)
    if unused:  # a typo in the table must not silently leave a field in
        raise RuntimeError(f"api {spec.api_key} v{version}: no entities named {sorted(unused)}")
    for cls in built.values():
        cls.__legacy_nested__ = types.MappingProxyType(built)
    return top


def _derive(base: Any, version: int, edits: Mapping[str, _Edit], built: dict[str, Any]) -> Any:
    if base.__flexible__:
        raise RuntimeError(f"{base.__name__} v{base.__version__} is flexible; old ones are not")
    edit = edits.get(base.__name__, _Edit())
    missing = (edit.drop | {a.after for a in edit.add}) - {f.name for f in dataclasses.fields(base)}
    if missing:
        raise RuntimeError(f"{base.__name__}: no fields {sorted(missing)}")
    specs: list[tuple[str, Any, Any]] = []
    for f in dataclasses.fields(base):
        retyped = _retyped(f.type, version, edits, built)
        if f.name not in edit.drop:
            kw: dict[str, Any] = {"metadata": f.metadata}
            if f.default is not dataclasses.MISSING:
                kw["default"] = f.default
            specs.append((f.name, retyped, field(**kw)))
        for added in edit.add:
            if added.after == f.name:
                meta = field(metadata={"kafka_type": added.kafka_type})
                specs.append((added.name, added.python_type, meta))
    namespace = {
        "__type__": base.__type__,
        "__version__": i16(version),
        "__flexible__": False,
        "__api_key__": base.__api_key__,
        "__header_schema__": base.__header_schema__,
        "__module__": __name__,
    }
    cls = dataclasses.make_dataclass(
        base.__name__, specs, namespace=namespace, frozen=True, slots=True, kw_only=True
    )
    built[base.__name__] = cls
    return cls


def _retyped(hint: Any, version: int, edits: Mapping[str, _Edit], built: dict[str, Any]) -> Any:
    """``hint`` with every nested entity class replaced by its derived class."""
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _derive(hint, version, edits, built)
    origin = typing.get_origin(hint)
    if origin is tuple:
        (inner, _ellipsis) = typing.get_args(hint)
        return tuple[_retyped(inner, version, edits, built), ...]  # type: ignore[misc]
    if origin in (types.UnionType, typing.Union):
        args = [_retyped(a, version, edits, built) for a in typing.get_args(hint)]
        out = args[0]
        for arg in args[1:]:
            out = out | arg
        return out
    return hint
