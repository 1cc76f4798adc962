"""ByteArrayConverter as a header converter: raw bytes both ways (what MirrorMaker 2 needs)."""

from __future__ import annotations

import pytest

from hub.api import DataError
from hub.api.schema import OPTIONAL_BYTES_SCHEMA, STRING_SCHEMA
from hub.converters.bytes_header import ByteArrayHeaderConverter
from hub.plugins.manager import get_plugin_manager
from hub.plugins.registry import lookup


def test_bytes_pass_through() -> None:
    conv = ByteArrayHeaderConverter({})
    raw = b"\x00\xff\xfe binary"
    assert conv.from_connect("t", "h", None, raw) == raw
    assert conv.from_connect("t", "h", OPTIONAL_BYTES_SCHEMA, bytearray(raw)) == raw
    assert conv.from_connect("t", "h", None, None) is None
    back = conv.to_connect("t", "h", raw)
    assert (back.schema, back.value) == (OPTIONAL_BYTES_SCHEMA, raw)
    assert conv.to_connect("t", "h", None).value is None


def test_non_bytes_are_data_errors() -> None:
    conv = ByteArrayHeaderConverter({})
    with pytest.raises(DataError):
        conv.from_connect("t", "h", None, "text")
    with pytest.raises(DataError):
        conv.from_connect("t", "h", STRING_SCHEMA, b"x")


def test_registered_under_kafkas_name() -> None:
    index = get_plugin_manager().header_converters()
    found = lookup(
        index, "header_converter", "org.apache.kafka.connect.converters.ByteArrayConverter"
    )
    assert found is ByteArrayHeaderConverter
