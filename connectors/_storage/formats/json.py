"""JSON lines: one record value per line, as Confluent's ``JsonFormat`` writes (``.json``).

Values are written the way Kafka Connect's JsonConverter (schemas off) renders them: structs
and maps as objects, bytes as base64, ``Timestamp``/``Date`` as numbers. Lines are encoded as
they arrive (one ``json`` call per record, the format's whole cost) and joined on ``finish``.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from collections.abc import Callable, Sequence
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

from connectors._storage.formats import COMPRESSION_EXTENSIONS, compress
from hub.api import DataError, SinkRecord

_EPOCH = dt.date(1970, 1, 1)


def _default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dt.datetime):
        return int(value.timestamp() * 1000)
    if isinstance(value, dt.date):
        return (value - _EPOCH).days
    if isinstance(value, decimal.Decimal):
        return float(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _encoder() -> Callable[[Any], str]:
    """One reusable C encoder: ``JSONEncoder.encode`` builds a new one per call, which costs
    more than encoding a 200-byte record. Falls back to the stdlib path without the C module."""
    if c_make_encoder is None:  # pragma: no cover - CPython always has it
        return json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=_default).encode
    encode = c_make_encoder(None, _default, encode_basestring, None, ":", ",", False, False, True)
    join = "".join

    def fast(value: Any) -> str:
        if type(value) is str:  # the C encoder returns a plain str for top-level strings
            return encode_basestring(value)
        return join(encode(value, 0))

    return fast


_ENCODE = _encoder()


class JsonFile:
    __slots__ = ("_compression", "_level", "_lines", "count")

    def __init__(self, compression: str, level: int) -> None:
        self._lines: list[str] = []
        self._compression = compression
        self._level = level
        self.count = 0

    def add(self, record: SinkRecord) -> None:
        try:
            self._lines.append(_ENCODE(record.value))
        except (TypeError, ValueError) as exc:
            raise DataError(
                f"{record.topic}-{record.partition}@{record.offset}: value is not JSON: {exc}"
            ) from exc
        self.count += 1

    def add_many(self, records: Sequence[SinkRecord]) -> None:
        """Hot path: one list comprehension; on a bad value, redone per record to name it."""
        try:
            lines = [_ENCODE(r.value) for r in records]
        except (TypeError, ValueError):
            for record in records:
                self.add(record)
            return
        self._lines += lines
        self.count += len(lines)

    def finish(self) -> bytes:
        # Idempotent (a failed upload finishes the same file again): no mutation here.
        data = ("\n".join(self._lines) + "\n").encode("utf-8", "surrogatepass")
        return compress(data, self._compression, self._level)


class JsonFormat:
    def __init__(self, compression: str = "none", level: int = -1) -> None:
        self.compression = compression
        self.level = level
        self.extension = ".json" + COMPRESSION_EXTENSIONS[compression]

    def new_file(self) -> JsonFile:
        return JsonFile(self.compression, self.level)
