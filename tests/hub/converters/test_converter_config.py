"""Choosing key/value/header converters from worker defaults and connector overrides."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field

from hub.api import ConfigError
from hub.converters.bytes import ByteArrayConverter
from hub.converters.config import configure_converters, converter_settings
from hub.converters.headers import SimpleHeaderConverter
from hub.converters.json import JsonConverter, JsonHeaderConverter
from hub.converters.string import StringConverter
from hub.plugins.registry import PluginRegistry

WORKER = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
}


def test_defaults_without_any_setting(registry: PluginRegistry) -> None:
    c = configure_converters({}, {}, registry)
    assert isinstance(c.key, JsonConverter) and c.key.is_key
    assert isinstance(c.value, JsonConverter) and not c.value.is_key
    assert c.value.config.schemas_enable is True
    assert isinstance(c.header, SimpleHeaderConverter)


def test_worker_settings_apply(registry: PluginRegistry) -> None:
    c = configure_converters(WORKER, {"name": "x"}, registry)
    assert isinstance(c.key, StringConverter)
    assert isinstance(c.value, JsonConverter) and c.value.config.schemas_enable is False


def test_connector_class_override_drops_other_class_settings(registry: PluginRegistry) -> None:
    c = configure_converters(
        {**WORKER, "key.converter.converter.encoding": "latin-1"},
        {"key.converter": "bytes", "value.converter": "JsonConverter"},
        registry,
    )
    assert isinstance(c.key, ByteArrayConverter)
    # different spelling of the same class: worker settings no longer apply
    assert c.value.config.schemas_enable is True


def test_connector_sub_settings_override_worker_for_the_same_class(
    registry: PluginRegistry,
) -> None:
    connector = {
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.decimal.format": "NUMERIC",
    }
    c = configure_converters(WORKER, connector, registry)
    assert c.value.config.schemas_enable is False  # from the worker
    assert c.value.config.decimal_format == "NUMERIC"  # from the connector


def test_connector_sub_settings_without_class_are_honoured(registry: PluginRegistry) -> None:
    c = configure_converters(WORKER, {"value.converter.schemas.enable": "true"}, registry)
    assert c.value.config.schemas_enable is True


def test_header_converter_override(registry: PluginRegistry) -> None:
    c = configure_converters(
        {}, {"header.converter": "json", "header.converter.schemas.enable": "false"}, registry
    )
    assert isinstance(c.header, JsonHeaderConverter)
    assert c.header.config.schemas_enable is False


def test_errors_name_the_full_keys(registry: PluginRegistry) -> None:
    with pytest.raises(ConfigError) as exc:
        configure_converters(
            {},
            {
                "key.converter": "com.example.Missing",
                "value.converter.schemas.enable": "perhaps",
            },
            registry,
        )
    errors = exc.value.errors
    assert set(errors) == {"key.converter", "value.converter.schemas.enable"}
    assert "com.example.Missing" in errors["key.converter"][0]


def test_accepts_a_pydantic_worker_config(registry: PluginRegistry) -> None:
    class WorkerConfig(BaseModel):
        model_config = ConfigDict(populate_by_name=True, extra="allow")
        value_converter: str | None = Field(None, alias="value.converter")

    worker = WorkerConfig.model_validate({"value.converter": "string"})
    assert converter_settings("value", worker, {}) == ("string", {})
    assert isinstance(configure_converters(worker, {}, registry).value, StringConverter)
