"""The connector contract's own behaviour: records, schemas, typed configs, errors."""

from __future__ import annotations

import pytest
from pydantic import Field

from hub.api import (
    ConfigError,
    ConfigModel,
    ConnectError,
    DataError,
    Header,
    RetriableError,
    Schema,
    SinkRecord,
    SourceRecord,
    TopicPartition,
    Type,
    validate_config,
)
from hub.api.schema import (
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    struct,
)


def test_records_are_immutable_and_replace_copies() -> None:
    record = SourceRecord(topic="t", value=1, source_partition={"f": "a"}, source_offset={"p": 3})
    changed = record.replace(value=2)
    assert (record.value, changed.value) == (1, 2)
    assert changed.source_offset == {"p": 3} and type(changed) is SourceRecord
    with pytest.raises(AttributeError):
        record.value = 5  # type: ignore[misc]


def test_headers_last_one_wins() -> None:
    record = SinkRecord(topic="t", partition=1, offset=7).with_header("a", 1).with_header("a", 2)
    assert record.headers == (Header("a", 1), Header("a", 2))
    assert record.header("a") == Header("a", 2)
    assert record.header("missing") is None
    assert record.topic_partition == TopicPartition("t", 1)


def test_schema_json_round_trip_with_nested_types() -> None:
    schema = struct(
        ("id", INT64_SCHEMA),
        ("tags", Schema(Type.ARRAY, value=STRING_SCHEMA)),
        ("attrs", Schema(Type.MAP, key=STRING_SCHEMA, value=OPTIONAL_STRING_SCHEMA)),
        ("inner", struct(("x", STRING_SCHEMA), optional=True)),
        name="com.example.Row",
    )
    as_json = schema.to_json()
    assert as_json["fields"][0] == {"type": "int64", "optional": False, "field": "id"}
    assert as_json["fields"][1]["items"] == {"type": "string", "optional": False}
    assert Schema.from_json(as_json) == schema
    assert schema.field("inner") is not None and schema.field("nope") is None


def test_schema_from_json_rejects_unknown_types() -> None:
    with pytest.raises(ValueError):
        Schema.from_json({"type": "uuid"})


class SampleConfig(ConfigModel):
    topic: str
    batch_size: int = Field(2000, alias="batch.size", gt=0)


def test_config_model_uses_dotted_aliases_and_keeps_unknown_keys() -> None:
    config = SampleConfig.parse({"topic": " logs ", "batch.size": "10", "transforms": "x"})
    assert config.topic == "logs" and config.batch_size == 10
    assert config.raw() == {"topic": "logs", "batch.size": 10, "transforms": "x"}
    assert "batch.size" in SampleConfig.json_schema()["properties"]


def test_config_errors_name_the_user_facing_key() -> None:
    with pytest.raises(ConfigError) as exc:
        SampleConfig.parse({"batch.size": "0"})
    assert set(exc.value.errors) == {"topic", "batch.size"}
    assert exc.value.errors["topic"] == ["Missing required configuration"]
    assert validate_config(SampleConfig, {"topic": "t"}) == {}


def test_error_tree() -> None:
    assert issubclass(RetriableError, ConnectError)
    assert issubclass(DataError, ConnectError) and issubclass(ConfigError, ConnectError)
    assert ConfigError("bad").errors == {}
