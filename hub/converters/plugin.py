"""Registers the built-in converters through the same hooks third-party plugins use."""

from __future__ import annotations

from hub.api import Converter, HeaderConverter
from hub.converters.avro import AvroConverter
from hub.converters.bytes import ByteArrayConverter
from hub.converters.bytes_header import ByteArrayHeaderConverter
from hub.converters.headers import SimpleHeaderConverter, StringHeaderConverter
from hub.converters.json import JsonConverter, JsonHeaderConverter
from hub.converters.json_schema import JsonSchemaConverter
from hub.converters.numbers import NUMBER_CONVERTERS, NUMBER_HEADER_CONVERTERS
from hub.converters.protobuf import ProtobufConverter
from hub.converters.string import StringConverter
from hub.plugins import hookimpl


@hookimpl
def sluice_converters() -> list[type[Converter]]:
    return [
        JsonConverter,
        StringConverter,
        ByteArrayConverter,
        AvroConverter,
        JsonSchemaConverter,
        ProtobufConverter,
        *NUMBER_CONVERTERS,
    ]


@hookimpl
def sluice_header_converters() -> list[type[HeaderConverter]]:
    return [
        SimpleHeaderConverter,
        JsonHeaderConverter,
        StringHeaderConverter,
        ByteArrayHeaderConverter,
        *NUMBER_HEADER_CONVERTERS,
    ]
