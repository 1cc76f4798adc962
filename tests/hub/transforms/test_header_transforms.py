from __future__ import annotations

import pytest

from hub.api import ConfigError, DataError, Header, SourceRecord
from hub.api.schema import INT64_SCHEMA, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA, Type, struct
from hub.transforms.filter import Filter
from hub.transforms.headers import DropHeaders, HeaderFrom, InsertHeader


def make(cls, variant=None, **config):  # type: ignore[no-untyped-def]
    return cls(cls.config_model.parse(config), variant)


def test_drop_headers_removes_every_occurrence() -> None:
    headers = (Header("a", 1), Header("b", 2), Header("a", 3), Header("c", 4))
    out = make(DropHeaders, headers="a, c").apply(SourceRecord(topic="t", headers=headers))
    assert out is not None and out.headers == (Header("b", 2),)
    record = SourceRecord(topic="t", headers=(Header("z", 1),))
    assert make(DropHeaders, headers="a").apply(record) is record


def test_insert_header_types_the_literal() -> None:
    out = make(InsertHeader, header="version", **{"value.literal": "42"}).apply(
        SourceRecord(topic="t")
    )
    assert out is not None
    h = out.header("version")
    assert h is not None and h.value == 42 and h.schema is not None
    assert h.schema.type is Type.INT8
    out = make(InsertHeader, header="region", **{"value.literal": "eu-west"}).apply(
        SourceRecord(topic="t", headers=(Header("x", 1),))
    )
    assert out is not None and [h.key for h in out.headers] == ["x", "region"]


def test_insert_header_requires_settings() -> None:
    with pytest.raises(ConfigError) as exc:
        InsertHeader.config_model.parse({"header": "x"})
    assert "value.literal" in exc.value.errors


SCHEMA = struct(("id", INT64_SCHEMA), ("user", OPTIONAL_STRING_SCHEMA), ("body", STRING_SCHEMA))


def test_header_from_copy_schemaless() -> None:
    t = make(HeaderFrom, "value", fields="id,user", headers="h_id,h_user", operation="copy")
    out = t.apply(SourceRecord(topic="t", value={"id": 1, "user": "ann", "body": "x"}))
    assert out is not None
    assert out.value == {"id": 1, "user": "ann", "body": "x"}
    assert [(h.key, h.value, h.schema) for h in out.headers] == [
        ("h_id", 1, None),
        ("h_user", "ann", None),
    ]


def test_header_from_move_with_schema() -> None:
    t = make(HeaderFrom, "value", fields="id", headers="h_id", operation="move")
    record = SourceRecord(
        topic="t", value={"id": 1, "user": None, "body": "x"}, value_schema=SCHEMA
    )
    out = t.apply(record)
    assert out is not None and out.value_schema is not None
    assert out.value == {"user": None, "body": "x"}
    assert [f.name for f in out.value_schema.fields] == ["user", "body"]
    assert out.headers[0] == Header("h_id", 1, INT64_SCHEMA)


def test_header_from_key_variant_and_errors() -> None:
    t = make(HeaderFrom, "key", fields="k", headers="hk", operation="move")
    out = t.apply(SourceRecord(topic="t", key={"k": 5, "o": 1}, value="v"))
    assert out is not None and out.key == {"o": 1} and out.header("hk") == Header("hk", 5)
    assert t.apply(SourceRecord(topic="t", key=None)) is not None
    with pytest.raises(DataError, match="'nope' is not in the key schema"):
        make(HeaderFrom, "key", fields="nope", headers="h", operation="copy").apply(
            SourceRecord(topic="t", key={"id": 1, "user": None, "body": ""}, key_schema=SCHEMA)
        )
    with pytest.raises(ConfigError, match="HeaderFromConfig"):
        HeaderFrom.config_model.parse({"fields": "a,b", "headers": "x", "operation": "copy"})
    with pytest.raises(ConfigError) as exc:
        HeaderFrom.config_model.parse({"fields": "a", "headers": "x", "operation": "cut"})
    assert "operation" in exc.value.errors


def test_filter_drops_everything() -> None:
    assert Filter(Filter.config_model.parse({})).apply(SourceRecord(topic="t", value=1)) is None
