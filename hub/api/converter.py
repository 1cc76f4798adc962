"""Converters: between a record's Python data (+ optional schema) and the bytes in Kafka.

Chosen per worker and overridable per connector with Kafka Connect's keys:
``key.converter``, ``value.converter``, ``header.converter`` plus their prefixed settings
(``value.converter.schemas.enable=false``). The configure call gets those settings without the
prefix. ``from_connect`` serialises for producing; ``to_connect`` parses consumed bytes and
raises DataError on bytes it cannot read (subject to ``errors.tolerance``).

Raw forms: a converter may declare, through ``raw_form()``, that its bytes and its values are
related in a fixed, simple way (the bytes ARE text in one encoding, or ARE the value). The
runtime then produces and builds records without calling the converter per record (its fast
paths), and a sink may write the consumed bytes as they are (``SinkRecordBatch``). The default
declares nothing (``OBJECTS``): every value goes through ``from_connect``/``to_connect``. A
converter must declare only a form it honours exactly, since the runtime takes the
declaration's word for the result.
"""

from __future__ import annotations

import codecs
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from hub.api.config import ConfigModel
from hub.api.schema import Schema


@dataclass(frozen=True, slots=True)
class SchemaAndValue:
    schema: Schema | None
    value: Any


@dataclass(frozen=True, slots=True)
class RawForm:
    """How a key/value converter's bytes relate to its values; what ``raw_form()`` returns.

    ``kind``:

    - ``"text"``: the bytes are the value's text in ``encoding`` (a Python codec's canonical
      name, e.g. ``"utf-8"``). ``to_connect(t, b)`` is ``(OPTIONAL_STRING_SCHEMA,
      b.decode(encoding))`` and raises ``DataError`` for bytes that do not decode;
      ``from_connect(t, s, v)`` is ``v.encode(encoding)`` for a ``str`` (``DataError`` if it
      cannot be encoded) and ``v`` itself for ``bytes``, whatever ``s``.
    - ``"bytes"``: the bytes are the value. ``to_connect(t, b)`` is ``(OPTIONAL_BYTES_SCHEMA,
      b)`` and never fails; ``from_connect(t, s, v)`` is ``v`` for ``bytes`` when ``s`` is None
      or a BYTES schema.
    - ``"other"``: nothing is promised (JSON, Avro, any custom converter): only the converter
      knows what the value is.

    In every kind, ``null_safe`` means None converts to None both ways without failing (with
    ``to_connect`` giving the kind's schema for text and bytes); every built-in converter is
    null-safe, so a column of nulls converts cleanly whatever the kind. Anything the form does
    not cover (a ``str`` given to a bytes converter, an int to a text converter) still goes
    through the converter's own methods.
    """

    kind: Literal["text", "bytes", "other"]
    encoding: str = ""
    null_safe: bool = False

    def is_text(self, encoding: str) -> bool:
        """True if the converter gives ``raw.decode(encoding)`` (codec names compare canonical)."""
        return self.kind == "text" and self.encoding == codecs.lookup(encoding).name


OBJECTS = RawForm("other")
"""The default raw form: no promise beyond the converter's methods."""


@dataclass(frozen=True, slots=True)
class HeaderRawForm:
    """What a header converter promises the runtime; what ``HeaderConverter.raw_form()`` gives.

    ``text``: ``from_connect`` writes a ``str`` as its UTF-8 bytes and an ``int`` (not a
    ``bool``) as its decimal digits in ASCII, and ``to_connect`` is a function of the header's
    key and bytes alone (not of the topic or of earlier calls) that never raises, so the runtime
    may write those values itself and convert a repeated (key, bytes) pair once.

    ``integers`` (only with ``text``): bytes that are 1 to 18 ASCII decimal digits read back as
    that ``int``, with the narrowest of the INT8/INT16/INT32/INT64 schemas that holds it (the
    rule of Kafka Connect's ``Values.parseString``).
    """

    text: bool = False
    integers: bool = False


OPAQUE_HEADERS = HeaderRawForm()
"""The default header form: every header value goes through the converter."""


class Converter(ABC):
    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    config_model: ClassVar[type[ConfigModel]] = ConfigModel
    description: ClassVar[str] = ""

    def __init__(self, config: Mapping[str, Any], is_key: bool) -> None:
        self.config = self.config_model.parse(config)
        self.is_key = is_key

    @abstractmethod
    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """Bytes to produce; None stays None (a tombstone value)."""

    @abstractmethod
    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        """Data read from Kafka; None bytes give SchemaAndValue(None, None)."""

    def raw_form(self) -> RawForm:
        """How this converter's bytes relate to its values (see ``RawForm``); asked once per
        task, after construction. The default promises nothing, which is always correct."""
        return OBJECTS


class HeaderConverter(ABC):
    """Converts single header values (``header.converter``)."""

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    config_model: ClassVar[type[ConfigModel]] = ConfigModel

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = self.config_model.parse(config)

    @abstractmethod
    def from_connect(
        self, topic: str, key: str, schema: Schema | None, value: Any
    ) -> bytes | None: ...

    @abstractmethod
    def to_connect(self, topic: str, key: str, data: bytes | None) -> SchemaAndValue: ...

    def raw_form(self) -> HeaderRawForm:
        """What the runtime may do without calling this converter (see ``HeaderRawForm``);
        asked once per task. The default promises nothing."""
        return OPAQUE_HEADERS
