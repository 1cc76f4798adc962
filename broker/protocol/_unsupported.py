"""Answering a request for an API version this broker does not serve with UNSUPPORTED_VERSION.

A client that sends a version we do not serve (or an API we do not implement) gets a response
in that version with Kafka's UNSUPPORTED_VERSION (35) error instead of a closed connection, so
the one request fails and the connection, with its other requests in flight, stays usable.
Kafka builds such answers per request type (``AbstractRequest.getErrorResponse``): the error
goes in the top-level ``error_code`` and in every element that echoes one from the request (each
topic partition of a Produce, each group of a DescribeGroups ...). Here one generic walk over
kio's schemas does the same for every API:

- every ``error_code`` field gets 35 and ``error_message`` says why;
- a response array of entities mirrors the request array it answers: the one with the same
  name, or a known synonym (``topic``/``name``, ``partition``/``partition_index``/``index``),
  or the only array on each side (``topic_data`` -> ``responses`` in Produce); elements copy
  the request element's fields of the same name and type (the topic, the partition index ...);
  a request array of plain names or numbers fills the first field of that type (``groups`` ->
  ``DescribedGroup.group_id``);
- everything else gets its "nothing" value (-1, empty, null, kio's default).

An answer is only possible when kio (or ``_legacy_schemas``) can decode that version's request
and encode its response, and only useful when the response has somewhere to put the error;
otherwise :func:`error_response` returns the reason and the connection closes instead.
"""

from __future__ import annotations

import dataclasses
import time
import types
import typing
import uuid
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from kio.schema.errors import ErrorCode
from kio.serial import entity_reader

from broker.protocol._legacy_schemas import load_request, load_response

_SYNONYMS = (
    frozenset({"name", "topic", "topic_name"}),
    frozenset({"partition_index", "partition", "index"}),
)
_NOTHING: dict[str, Any] = {
    "int8": -1, "int16": -1, "int32": -1, "int64": -1, "uint8": 0, "uint16": 0, "uint32": 0,
    "uint64": 0, "float64": 0.0, "string": "", "bool": False, "bytes": b"", "records": b"",
    "uuid": uuid.UUID(int=0), "timedelta_i32": timedelta(0), "timedelta_i64": timedelta(0),
    "datetime_i64": datetime.fromtimestamp(0, UTC),
}  # fmt: skip


def error_response(
    api_key: int,
    version: int,
    frame: bytes,
    error_code: int = ErrorCode.unsupported_version,
    message: str | None = None,
) -> tuple[Any, str | None]:
    """(response entity, None) to send, or (None, why no answer is possible).

    ``error_code``/``message`` default to UNSUPPORTED_VERSION; the authorizer answers a refused
    request the same way with an AUTHORIZATION_FAILED code."""
    try:
        request_cls = load_request(api_key, version)
        response_cls = load_response(api_key, version)
    except Exception:  # kio: UnknownEntity (no schema) or a missing schema module
        return None, "no schema for this api version"
    try:
        read_header, read_body = _readers(request_cls)
        _, offset = read_header(frame, 0)
        request, _ = read_body(frame, offset)
    except Exception as exc:
        return None, f"malformed request: {exc!r}"
    if message is None:
        message = f"api {api_key} version {version} is not supported by this broker"
    code = ErrorCode(error_code)
    try:
        response = _fill(response_cls, request, message, code)
    except Exception as exc:  # a schema shape this walk does not know: close, and say why
        return None, f"cannot build an error response: {exc!r}"
    if not _carries_error(response, code):
        return None, "the response has no error field"
    return response, None


@cache
def _readers(request_cls: Any) -> tuple[Any, Any]:
    return entity_reader(request_cls.__header_schema__), entity_reader(request_cls)


def _fill(cls: Any, source: Any, message: str, code: ErrorCode, key: Any = None) -> Any:
    """An instance of ``cls`` answering ``source`` (a request entity, or None), see module doc.

    ``key`` is the plain value (a name, a partition number) when the request array being
    mirrored holds plain values rather than entities.
    """
    # Tagged fields keep their defaults (they are optional on the wire) unless they have none.
    own = [f for f in dataclasses.fields(cls) if not (_tagged(f) and _has_default(f))]
    arrays = [f for f in own if _element(f.type) is not None and _is_tuple(f.type)]
    source_arrays = _array_fields(source)
    key_field = _key_field(own, key) if key is not None else None
    values: dict[str, Any] = {}
    for f in own:
        if f is key_field:
            values[f.name] = key
            continue
        element = _element(f.type)
        if element is not None and _is_tuple(f.type):
            items = _mirrored(f.name, source, source_arrays, single=len(arrays) == 1)
            values[f.name] = tuple(
                _fill(element, None, message, code, item)
                if not dataclasses.is_dataclass(item)
                else _fill(element, item, message, code)
                for item in items
            )
        elif element is not None:
            nested = getattr(source, f.name, None)
            values[f.name] = None if _nullable(f.type) else _fill(element, nested, message, code)
        else:
            values[f.name] = _scalar(f, source, message, code)
    return cls(**values)


def _scalar(f: dataclasses.Field[Any], source: Any, message: str, code: ErrorCode) -> Any:
    kafka_type = f.metadata.get("kafka_type", "")
    if kafka_type == "error_code":
        return code
    if f.name == "error_message":
        return message
    if source is not None:
        theirs = _fields(source.__class__)
        for name in _names_like(f.name):
            value = getattr(source, name, None)
            usable = value is not None or _nullable(f.type)
            if name in theirs and _same_kind(theirs[name], f) and usable:
                return value
    if _is_tuple(f.type):
        return ()
    if f.default is not dataclasses.MISSING:
        return f.default
    if _nullable(f.type):
        return None
    return _NOTHING[kafka_type]


def _mirrored(name: str, source: Any, source_arrays: list[str], single: bool) -> Any:
    """The request array a response array answers, or () if none does."""
    if source is None:
        return ()
    for candidate in _names_like(name):
        if candidate in source_arrays:
            return getattr(source, candidate) or ()
    if single:  # the only array on our side answers every array of the request
        return tuple(item for name in source_arrays for item in getattr(source, name) or ())
    return ()


def _key_field(own: list[dataclasses.Field[Any]], key: Any) -> dataclasses.Field[Any] | None:
    """The field a plain request value (a group id, a partition number) goes to."""
    wanted = "string" if isinstance(key, str) else "int32"
    for f in own:
        if f.metadata.get("kafka_type") == wanted and not _is_tuple(f.type):
            return f
    return None


def _carries_error(entity: Any, code: ErrorCode) -> bool:
    for f in dataclasses.fields(entity):
        value = getattr(entity, f.name)
        if f.metadata.get("kafka_type") == "error_code" and value == code:
            return True
        items = value if isinstance(value, tuple) else (value,)
        if any(dataclasses.is_dataclass(v) and _carries_error(v, code) for v in items):
            return True
    return False


def _names_like(name: str) -> tuple[str, ...]:
    for group in _SYNONYMS:
        if name in group:
            return (name, *sorted(group - {name}))
    return (name,)


@cache
def _fields(cls: Any) -> dict[str, dataclasses.Field[Any]]:
    return {f.name: f for f in dataclasses.fields(cls) if not _tagged(f)}


def _same_kind(a: dataclasses.Field[Any], b: dataclasses.Field[Any]) -> bool:
    same_type = a.metadata.get("kafka_type") == b.metadata.get("kafka_type")
    return same_type and _is_tuple(a.type) == _is_tuple(b.type) and not _element(a.type)


def _array_fields(source: Any) -> list[str]:
    if source is None:
        return []
    return [name for name, f in _fields(source.__class__).items() if _is_tuple(f.type)]


def _tagged(f: dataclasses.Field[Any]) -> bool:
    return "tag" in f.metadata


def _has_default(f: dataclasses.Field[Any]) -> bool:
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


def _strip_none(hint: Any) -> Any:
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        return inner[0]
    return hint


def _nullable(hint: Any) -> bool:
    return typing.get_origin(hint) in (types.UnionType, typing.Union) and type(None) in (
        typing.get_args(hint)
    )


def _is_tuple(hint: Any) -> bool:
    return typing.get_origin(_strip_none(hint)) is tuple


def _element(hint: Any) -> Any:
    """The entity class of an entity field or of a tuple of entities, else None."""
    inner = _strip_none(hint)
    if typing.get_origin(inner) is tuple:
        inner = typing.get_args(inner)[0]
    return inner if dataclasses.is_dataclass(inner) else None


class _WarnOncePer:
    """Lets one WARNING per (api key, version) through per interval and counts the rest.

    A client stuck sending a version we cannot answer reconnects and retries in a loop; one
    line a minute says so without flooding the log.
    """

    def __init__(self, interval_s: float) -> None:
        self._interval = interval_s
        self._last: dict[tuple[int, int], float] = {}
        self._dropped: dict[tuple[int, int], int] = {}

    def allow(self, api_key: int, version: int) -> bool:
        key = (api_key, version)
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self._interval:
            self._dropped[key] = self._dropped.get(key, 0) + 1
            return False
        if len(self._last) > 4096:  # bounded: a fuzzer sending every key/version pair
            self._last.clear()
        self._last[key] = now
        return True

    def suppressed(self, api_key: int, version: int) -> dict[str, int]:
        """``{"suppressed": n}`` warnings skipped since the last one let through, and resets."""
        n = self._dropped.pop((api_key, version), 0)
        return {"suppressed": n} if n else {}


warn_limiter = _WarnOncePer(60.0)
"""Shared by every connection: the limit is per broker, not per connection."""
