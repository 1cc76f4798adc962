"""Config providers end to end with a real ``sluice up``.

- A file pipeline whose sink path comes from ``${file:...}``: the task writes to the resolved
  path, while the config topic and every REST answer keep the placeholder (task configs
  included: the connector copies ``file`` into them, the worker turns it back).
- A CDC pipeline whose PostgreSQL password comes from ``${file:...}`` for the one role
  PostgreSQL asks a password of: the snapshot arrives (the password was resolved), and the
  password is in no REST answer, no config topic record and no line of the hub's log.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from tests.fixtures.broker import wait_until

P = "org.apache.kafka.common.config.provider."
SECRET = f"s3cret{uuid.uuid4().hex[:8]}"


def _config_topic_values(hub_client: dict[str, str]) -> list[bytes]:
    """The config topic's records, read as the hub (nobody else may read it by default)."""
    consumer = Consumer({**hub_client, "group.id": "unused",
                         "enable.auto.commit": False})  # fmt: skip
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition("sluice-connect-configs", 0), 10)
        consumer.assign([TopicPartition("sluice-connect-configs", 0, 0)])
        values: list[bytes] = []
        while len(values) < high:
            msg = consumer.poll(5)
            assert msg is not None, "config topic read stalled"
            values.append(msg.value() or b"")
        return values
    finally:
        consumer.close()


def test_secret_resolved_only_in_the_task(hub_factory: Callable[..., Any], tmp_path: Path) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    out = tmp_path / f"out-{SECRET}.txt"
    (secrets / "sink.properties").write_text(f"path={out}\n")
    hub = hub_factory(**{
        "config.providers": "file",
        "config.providers.file.class": P + "FileConfigProvider",
        "config.providers.file.param.allowed.paths": str(secrets),
    })  # fmt: skip
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line {i}\n" for i in range(10)))
    topic = f"cp-{uuid.uuid4().hex[:6]}"
    placeholder = f"${{file:{secrets}/sink.properties:path}}"
    for name, config in (
        ("cp-source", {"connector.class": "FileStreamSource", "file": str(source),
                       "topic": topic}),
        ("cp-sink", {"connector.class": "FileStreamSink", "file": placeholder,
                     "topics": topic}),
    ):  # fmt: skip
        status, body = hub.request("POST", "/connectors", {"name": name, "config": config})
        assert status == 201, body
    wait_until(lambda: out.exists() and out.read_text().count("\n") >= 10, 60,
               "the sink to write to the resolved path")  # fmt: skip

    answers = [hub.request("GET", path)[1] for path in (
        "/connectors/cp-sink", "/connectors/cp-sink/config", "/connectors/cp-sink/tasks",
        "/connectors?expand=info&expand=status", "/connectors/cp-sink/status",
    )]  # fmt: skip
    assert answers[1]["file"] == placeholder
    assert any(t["config"].get("file") == placeholder for t in answers[2])
    text = json.dumps(answers)
    assert SECRET not in text
    assert not [v for v in _config_topic_values(hub.hub_client_config()) if SECRET.encode() in v]


def test_cdc_password_never_leaves_the_task(
    hub_factory: Callable[..., Any], tmp_path: Path, postgres: Any, pg_database: str
) -> None:
    import psycopg

    from tests.connectors.postgres_cdc.test_pipeline_e2e import TopicReader, debezium_config
    from tests.fixtures.postgres import PASSWORD_ROLE

    password = f"pw{uuid.uuid4().hex}"
    postgres.create_role(PASSWORD_ROLE, replication=True, password=password)
    postgres.execute(f"ALTER ROLE {PASSWORD_ROLE} SUPERUSER")  # publications, snapshot reads
    with psycopg.connect(postgres.dsn(pg_database), autocommit=True) as conn:
        conn.execute("CREATE SCHEMA inventory")
        conn.execute("CREATE TABLE inventory.customers (id int PRIMARY KEY, email text)")
        conn.execute("INSERT INTO inventory.customers VALUES (1, 'a@example.com')")
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "pg.properties").write_text(f"password={password}\n")
    hub = hub_factory(**{
        "config.providers": "file",
        "config.providers.file.class": P + "FileConfigProvider",
    })  # fmt: skip
    tag = uuid.uuid4().hex[:6]
    config = debezium_config(postgres, pg_database, tag)
    config.update({"database.user": PASSWORD_ROLE,
                   "database.password": f"${{file:{secrets}/pg.properties:password}}"})  # fmt: skip
    status, body = hub.request("POST", "/connectors", {"name": "cdc", "config": config})
    assert status == 201, body
    reader = TopicReader(hub.bootstrap, f"dbserver{tag}.inventory.customers")
    try:
        wait_until(lambda: reader.ids("r") == [1], 60, "the snapshot (the login worked)")
        answers = [hub.request("GET", path)[1] for path in (
            "/connectors/cdc", "/connectors/cdc/config", "/connectors/cdc/tasks",
            "/connectors/cdc/status", "/connectors?expand=info&expand=status",
        )]  # fmt: skip
        assert password not in json.dumps(answers)
        assert not [
            v for v in _config_topic_values(hub.hub_client_config()) if password.encode() in v
        ]
        assert password not in hub.log()
    finally:
        reader.close()
        hub.request("DELETE", "/connectors/cdc")
        hub.stop()
        with psycopg.connect(postgres.dsn(pg_database), autocommit=True) as conn:
            conn.execute(f"DROP PUBLICATION IF EXISTS dbz_publication_{tag}")
            conn.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                         "WHERE slot_name = %s AND NOT active", (f"debezium_{tag}",))  # fmt: skip
        postgres.execute(f"ALTER ROLE {PASSWORD_ROLE} NOSUPERUSER")
