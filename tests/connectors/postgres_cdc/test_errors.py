"""Bad input fails fast with a message that says what to do (task driven directly through
``TaskHarness``'s in-test context; the worker turns these ConnectErrors into FAILED)."""

from __future__ import annotations

import logging

import pytest

from connectors.postgres_cdc.config import PostgresCdcConfig
from connectors.postgres_cdc.connector import PostgresCdcConnector
from hub.api import ConfigError, ConnectError, RetriableError
from tests.fixtures.postgres import PASSWORD_ROLE


def start_error(harness, **overrides: str) -> str:
    h = harness(start=False, **overrides)
    with pytest.raises(ConnectError) as info:
        h.start()
    assert not isinstance(info.value, RetriableError)
    return str(info.value)


def test_wrong_password(harness, postgres) -> None:
    postgres.create_role(PASSWORD_ROLE, replication=True, password="right")
    message = start_error(harness, **{"database.user": PASSWORD_ROLE,
                                      "database.password": "wrong"})  # fmt: skip
    assert "rejected the login" in message and "database.password" in message


def test_unknown_database(harness) -> None:
    message = start_error(harness, **{"database.dbname": "no_such_db"})
    assert "database.dbname" in message


def test_role_without_replication_privilege(harness, postgres) -> None:
    role = postgres.create_role("cdc_norepl", replication=False)
    message = start_error(harness, **{"database.user": role})
    assert "REPLICATION" in message and f"ALTER ROLE {role} WITH REPLICATION" in message


def test_wal_level_not_logical(harness, postgres_without_logical) -> None:
    server = postgres_without_logical
    message = start_error(harness, **server.connector_config("postgres"))
    assert "wal_level" in message and "logical" in message


@pytest.mark.slow  # waits out a slot (~15 s)
def test_slot_in_use_by_another_client(harness, sql) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY)")
    first = harness()
    first.poll_until(lambda _: first.task._repl.streaming, what="streaming")
    message = start_error(harness, **{"topic.prefix": "other"})
    assert "in use" in message and "slot.name" in message


def test_table_without_primary_key_is_keyed_by_the_whole_row(harness, sql, caplog) -> None:
    sql("CREATE TABLE nokey (a int, b text)", "ALTER TABLE nokey REPLICA IDENTITY FULL",
        "INSERT INTO nokey VALUES (1, 'x')")  # fmt: skip
    with caplog.at_level(logging.WARNING):
        h = harness()
        h.wait_changes(1)
    sql("UPDATE nokey SET b = 'y'", "DELETE FROM nokey")
    snap, upd, dele = h.wait_changes(3)
    assert snap.key == {"a": 1, "b": "x"}
    assert upd.value["before"] == {"a": 1, "b": "x"} and upd.key == {"a": 1, "b": "y"}
    assert dele.key == {"a": 1, "b": "y"}
    assert "no primary key" in caplog.text


def test_config_errors_name_the_key() -> None:
    base = {"database.hostname": "h", "database.user": "u", "database.dbname": "d",
            "topic.prefix": "p"}  # fmt: skip
    with pytest.raises(ConfigError) as info:
        PostgresCdcConfig.parse({**base, "tasks.max": "2"})
    assert "tasks.max" in info.value.errors and "must be 1" in info.value.errors["tasks.max"][0]
    with pytest.raises(ConfigError) as info:
        PostgresCdcConfig.parse({**base, "plugin.name": "decoderbufs"})
    assert "pgoutput" in info.value.errors["plugin.name"][0]
    legacy = {k: v for k, v in base.items() if k != "topic.prefix"}
    assert PostgresCdcConfig.parse({**legacy, "database.server.name": "old"}).topic_prefix == "old"
    with pytest.raises(ConfigError) as info:
        PostgresCdcConfig.parse({"database.hostname": "h"})
    assert {"database.user", "database.dbname", "topic.prefix"} <= set(info.value.errors)
    assert PostgresCdcConnector.validate({**base, "tasks.max": "3"})["tasks.max"]
