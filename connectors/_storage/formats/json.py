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


_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=_default).encode


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
