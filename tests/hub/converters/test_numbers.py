"""Kafka's number converters: the fixed-width big-endian bytes, checked against real clients.

confluent-kafka's ``IntegerSerializer``/``DoubleSerializer`` write the bytes Kafka's Java
serializers write; kcat reads big-endian integers with its pack-style deserializer
(``-s value=>q``); both run against the real broker.
"""

from __future__ import annotations

import math
import shutil
import subprocess

import pytest
from confluent_kafka import Producer
from confluent_kafka.serialization import (
    DoubleDeserializer,
    DoubleSerializer,
    IntegerDeserializer,
    IntegerSerializer,
    MessageField,
    SerializationContext,
)

from hub.api import DataError
from hub.api.schema import Type
from hub.converters.numbers import (
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    LongConverter,
    LongHeaderConverter,
    ShortConverter,
)
from hub.plugins.manager import create_plugin_manager

CTX = SerializationContext("t", MessageField.VALUE)


@pytest.mark.parametrize(
    ("cls", "value", "raw", "kind"),
    [
        (LongConverter, -2, b"\xff" * 7 + b"\xfe", Type.INT64),
        (IntegerConverter, 258, b"\x00\x00\x01\x02", Type.INT32),
        (ShortConverter, -32768, b"\x80\x00", Type.INT16),
        (FloatConverter, 1.5, b"\x3f\xc0\x00\x00", Type.FLOAT32),
        (DoubleConverter, -0.5, b"\xbf\xe0" + b"\x00" * 6, Type.FLOAT64),
    ],
)
def test_fixed_width_big_endian_and_nulls(cls, value, raw, kind) -> None:
    converter = cls({}, False)
    assert converter.from_connect("t", None, value) == raw
    got = converter.to_connect("t", raw)
    assert got.value == value and got.schema.type is kind and got.schema.optional
    assert converter.from_connect("t", None, None) is None
    none = converter.to_connect("t", None)
    assert none.value is None and none.schema.type is kind  # always the converter's schema
    with pytest.raises(DataError, match="Size of data received"):
        converter.to_connect("t", raw + b"\x00")


def test_wrong_values_are_data_errors() -> None:
    for bad in ("1", True, 1.5):
        with pytest.raises(DataError, match="Failed to serialize to long"):
            LongConverter({}, False).from_connect("t", None, bad)
    with pytest.raises(DataError, match="out of range"):
        ShortConverter({}, False).from_connect("t", None, 40_000)
    with pytest.raises(DataError):
        FloatConverter({}, False).from_connect("t", None, 1e300)
    assert DoubleConverter({}, True).from_connect("t", None, 3) == DoubleSerializer()(3.0, CTX)
    nan = FloatConverter({}, False).to_connect("t", b"\x7f\xc0\x00\x00").value
    assert math.isnan(nan)


def test_registered_under_kafka_class_names() -> None:
    registry = create_plugin_manager(load_entrypoints=False)
    converters, headers = registry.converters(), registry.header_converters()
    for name in ("Long", "Integer", "Short", "Float", "Double"):
        java = f"org.apache.kafka.connect.converters.{name}Converter"
        assert java in converters and java in headers
    header = LongHeaderConverter({})
    assert header.to_connect("t", "h", header.from_connect("t", "h", None, 7)).value == 7


def test_bytes_of_confluent_kafka_serializers_round_trip() -> None:
    integers, doubles = IntegerConverter({}, False), DoubleConverter({}, False)
    for n in (0, 1, -1, 2**31 - 1, -(2**31)):
        raw = IntegerSerializer()(n, CTX)
        assert integers.to_connect("t", raw).value == n
        assert integers.from_connect("t", None, n) == raw
        assert IntegerDeserializer()(integers.from_connect("t", None, n), CTX) == n
    for x in (0.0, -1.25, 1e-300, 6.02e23, math.inf):
        raw = DoubleSerializer()(x, CTX)
        assert doubles.to_connect("t", raw).value == x
        assert DoubleDeserializer()(doubles.from_connect("t", None, x), CTX) == x


def test_kcat_reads_what_the_converters_write(broker, topic_name) -> None:
    kcat = shutil.which("kcat")
    assert kcat is not None, "kcat is installed by ./dev"
    values = {"q": (LongConverter, [2**63 - 1, -5]), "i": (IntegerConverter, [-(2**31), 9]),
              "h": (ShortConverter, [32767, -1])}  # fmt: skip
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for fmt, (cls, numbers) in values.items():
        for n in numbers:
            producer.produce(f"{topic_name}-{fmt}", cls({}, False).from_connect("t", None, n))
    assert producer.flush(30) == 0
    for fmt, (_, numbers) in values.items():
        out = subprocess.run(
            [kcat, "-b", broker.bootstrap, "-C", "-t", f"{topic_name}-{fmt}", "-o", "beginning",
             "-e", "-q", "-s", f"value=>{fmt}", "-f", "%s\n"],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        assert [int(line) for line in out.stdout.split()] == numbers
