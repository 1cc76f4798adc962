"""Config validation (errors name the key to fix), JDBC URL translation, plugin aliases."""

from __future__ import annotations

import pytest

from connectors.warehouse.config import WarehouseSinkConfig
from connectors.warehouse.connector import WarehouseSinkConnector
from connectors.warehouse.jdbc_url import to_sqlalchemy_url
from hub.api import ConfigError, validate_config

BASE = {"topics": "orders", "connection.url": "jdbc:sqlite:/tmp/x.db"}


def errors(**overrides: str) -> dict[str, list[str]]:
    return validate_config(WarehouseSinkConfig, {**BASE, **overrides})


def test_confluent_config_as_is() -> None:
    config = WarehouseSinkConfig.parse({
        "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "tasks.max": "1",
        "topics": "orders", "connection.url": "jdbc:postgresql://db:5432/shop",
        "connection.user": "app", "connection.password": "secret", "insert.mode": "upsert",
        "pk.mode": "record_value", "pk.fields": "id, region", "auto.create": "true",
        "auto.evolve": "true", "table.name.format": "kafka_${topic}", "batch.size": "500",
        "fields.whitelist": "id,region,total",
    })  # fmt: skip
    assert config.pk_fields == ["id", "region"] and config.batch_size == 500
    assert config.auto_create and config.auto_evolve and config.insert_mode == "upsert"
    url = config.url()
    assert (url.drivername, url.host, url.port, url.database) == (
        "postgresql+psycopg", "db", 5432, "shop")  # fmt: skip
    assert (url.username, url.password) == ("app", "secret")


def test_defaults_are_confluents() -> None:
    config = WarehouseSinkConfig.parse(BASE)
    assert (config.insert_mode, config.pk_mode, config.batch_size) == ("insert", "none", 3000)
    assert config.table_name_format == "${topic}"
    assert not (config.auto_create or config.auto_evolve or config.delete_enabled)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"delete.enabled": "true", "pk.mode": "record_value"}, "delete.enabled"),
        ({"insert.mode": "upsert"}, "pk.mode"),
        ({"insert.mode": "merge"}, "insert.mode"),
        ({"pk.mode": "everything"}, "pk.mode"),
        ({"pk.mode": "kafka", "pk.fields": "a,b"}, "pk.fields"),
        ({"batch.size": "0"}, "batch.size"),
        ({"connection.url": "jdbc:oracle:thin:@h:1521:x"}, "connection.url"),
        ({"connection.url": "not a url"}, "connection.url"),
        ({"topics": ""}, "topics"),
    ],
)
def test_bad_configs_name_the_field(overrides: dict[str, str], field: str) -> None:
    assert field in errors(**overrides), errors(**overrides)


def test_missing_url_is_named() -> None:
    assert "connection.url" in validate_config(WarehouseSinkConfig, {"topics": "t"})


def test_connector_validate_and_parse_agree() -> None:
    raw = {**BASE, "delete.enabled": "true"}
    assert "delete.enabled" in WarehouseSinkConnector.validate(raw)
    with pytest.raises(ConfigError) as info:
        WarehouseSinkConfig.parse(raw)
    assert "record_key" in info.value.errors["delete.enabled"][0]


def test_plugin_registers_the_confluent_alias() -> None:
    from hub.plugins.manager import get_plugin_manager

    connectors = get_plugin_manager().connectors()
    assert connectors["io.confluent.connect.jdbc.JdbcSinkConnector"] is WarehouseSinkConnector
    assert connectors["warehouse-sink"] is WarehouseSinkConnector


@pytest.mark.parametrize(
    ("jdbc", "expected"),
    [
        ("jdbc:postgresql://h:5433/db?user=a&password=p%40ss&sslmode=require",
         "postgresql+psycopg://a:p%40ss@h:5433/db?sslmode=require"),
        ("jdbc:postgresql://h/db?ssl=true&currentSchema=s&loginTimeout=5",
         "postgresql+psycopg://h/db?connect_timeout=5&options=-csearch_path%3Ds&sslmode=require"),
        ("jdbc:postgresql://h/db?prepareThreshold=0", "postgresql+psycopg://h/db"),
        ("jdbc:sqlite:/var/data/w.db", "sqlite:////var/data/w.db"),
        ("jdbc:sqlite:rel.db", "sqlite:///rel.db"),
        ("jdbc:duckdb:/tmp/w.duckdb", "duckdb:////tmp/w.duckdb"),
        ("jdbc:mysql://h:3306/db?user=u", "mysql://u@h:3306/db"),
        ("postgresql://u@h/db", "postgresql+psycopg://u@h/db"),
        ("sqlite:///x.db", "sqlite:///x.db"),
    ],
)  # fmt: skip
def test_jdbc_url_translation(jdbc: str, expected: str) -> None:
    assert to_sqlalchemy_url(jdbc).render_as_string(hide_password=False) == expected


def test_connection_user_and_password_override_the_url() -> None:
    url = to_sqlalchemy_url("jdbc:postgresql://h/db?user=a&password=b", "c", "d")
    assert (url.username, url.password) == ("c", "d")


def test_in_memory_urls() -> None:
    assert to_sqlalchemy_url("jdbc:duckdb:").database == ":memory:"
    assert to_sqlalchemy_url("jdbc:sqlite::memory:").database == ":memory:"


BAD_URLS = ["jdbc:sqlserver://h;databaseName=x", "jdbc:postgresql:db", "jdbc:postgresql://a,b/db",
            "jdbc:postgresql://h:x/db"]  # fmt: skip


@pytest.mark.parametrize("bad", BAD_URLS)
def test_untranslatable_urls_say_why(bad: str) -> None:
    with pytest.raises(ValueError):
        to_sqlalchemy_url(bad)
