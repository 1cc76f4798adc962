"""PostgreSQL CDC with the AvroConverter, through ``sluice up`` and its schema registry, into
the S3 sink (AvroFormat, moto's S3 server) and the warehouse sink (a second real database).

Checked field by field: each Avro object in the bucket holds the change events of the source
rows; the warehouse table equals the source table. A column added mid-stream registers a new
compatible schema version, rolls the S3 file and evolves the warehouse table.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import uuid
from pathlib import Path
from typing import Any

import fastavro
import psycopg
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient

from tests.fixtures.broker import wait_until
from tests.fixtures.hub import HubProcess
from tests.fixtures.s3 import S3Server

AVRO = "io.confluent.connect.avro.AvroConverter"


def converters(url: str, token: str) -> dict[str, str]:
    """The Avro converters against the registry of ``sluice up``, which takes the hub's token."""
    config = {"key.converter": AVRO, "value.converter": AVRO}
    for side in ("key", "value"):
        config |= {f"{side}.converter.schema.registry.url": url,
                   f"{side}.converter.bearer.auth.credentials.source": "STATIC_TOKEN",
                   f"{side}.converter.bearer.auth.token": token}  # fmt: skip
    return config


@pytest.fixture
def hub(tmp_path: Path) -> Any:
    proc = HubProcess(tmp_path / "hub", {"offset.flush.interval.ms": 200})
    proc.start()
    yield proc
    proc.stop()


def rows(postgres: Any, db: str, table: str, columns: str) -> list[tuple[Any, ...]] | None:
    with psycopg.connect(postgres.dsn(db), autocommit=True) as conn:
        found = conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()
        if not found or found[0] is None:
            return None
        try:
            return conn.execute(f"SELECT {columns} FROM {table} ORDER BY id").fetchall()
        except psycopg.errors.UndefinedColumn:
            return None  # not evolved yet


def avro_objects(client: Any, bucket: str) -> dict[str, list[dict[str, Any]]]:
    listed = client.list_objects_v2(Bucket=bucket).get("Contents", [])
    out = {}
    for obj in listed:
        body = client.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read()
        out[obj["Key"]] = list(fastavro.reader(io.BytesIO(body)))
    return out


def test_cdc_avro_into_s3_and_warehouse(
    hub: HubProcess, postgres: Any, pg_database: str, s3_server: S3Server, s3_client: Any,
    s3_bucket: str,
) -> None:  # fmt: skip
    tag = uuid.uuid4().hex[:6]
    target = postgres.create_database()
    with psycopg.connect(postgres.dsn(pg_database), autocommit=True) as conn:
        conn.execute("CREATE SCHEMA inventory")
        conn.execute("CREATE TABLE inventory.customers (id int PRIMARY KEY, email text, "
                     "score numeric(10,2), born date)")  # fmt: skip
        conn.execute("INSERT INTO inventory.customers SELECT g, 'c' || g || '@example.com', "
                     "g * 1.5, date '2000-01-01' + g FROM generate_series(1, 200) g")  # fmt: skip
    url = hub.registry_url
    source = {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "database.hostname": postgres.host, "database.port": str(postgres.port),
        "database.user": postgres.user, "database.password": postgres.password,
        "database.dbname": pg_database, "topic.prefix": f"av{tag}", "plugin.name": "pgoutput",
        "slot.name": f"av_{tag}", "publication.name": f"av_pub_{tag}",
        "table.include.list": "inventory.customers", "tombstones.on.delete": "false",
        **converters(url, hub.token),
    }  # fmt: skip
    topic = f"av{tag}.inventory.customers"
    assert hub.request("POST", "/connectors", {"name": "src", "config": source})[0] == 201
    s3 = {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector", "topics": topic,
        "flush.size": "50", "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
        **s3_server.sink_config(s3_bucket), **converters(url, hub.token),
    }  # fmt: skip
    warehouse = {
        "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "topics": topic,
        "connection.url": f"jdbc:postgresql://{postgres.host}:{postgres.port}/{target}",
        "connection.user": postgres.user, "connection.password": postgres.password,
        "insert.mode": "upsert", "pk.mode": "record_key", "delete.enabled": "true",
        "auto.create": "true", "auto.evolve": "true", "table.name.format": "customers",
        **converters(url, hub.token),
    }  # fmt: skip
    assert hub.request("POST", "/connectors", {"name": "s3", "config": s3})[0] == 201
    assert hub.request("POST", "/connectors", {"name": "wh", "config": warehouse})[0] == 201
    columns = "id, email, score, born"

    def converged(cols: str = columns) -> bool:
        want = rows(postgres, pg_database, "inventory.customers", cols)
        return want is not None and rows(postgres, target, "customers", cols) == want

    wait_until(converged, 60, "the snapshot in the warehouse table")
    registry = SchemaRegistryClient({
        "url": url, "bearer.auth.credentials.source": "STATIC_TOKEN",
        "bearer.auth.token": hub.token, "bearer.auth.logical.cluster": "-",
        "bearer.auth.identity.pool.id": "-",
    })  # fmt: skip
    assert {f"{topic}-key", f"{topic}-value"} <= set(registry.get_subjects())
    assert registry.get_versions(f"{topic}-value") == [1]

    # S3: 200 snapshot events in 4 Avro files, each event's `after` equal to its source row
    wait_until(lambda: len(avro_objects(s3_client, s3_bucket)) >= 4, 60, "4 Avro objects")
    events = [e for _, es in sorted(avro_objects(s3_client, s3_bucket).items()) for e in es]
    source_rows = {r[0]: r for r in rows(postgres, pg_database, "inventory.customers", columns)}
    assert [e["after"]["id"] for e in events[:200]] == list(range(1, 201))
    for event in events[:200]:
        after, row = event["after"], source_rows[event["after"]["id"]]
        assert event["op"] == "r" and event["before"] is None
        assert (after["email"], after["score"]) == (row[1], row[2])
        assert after["score"] == decimal.Decimal(row[2])  # Connect Decimal as Avro decimal
        assert after["born"] == (row[3] - dt.date(1970, 1, 1)).days  # io.debezium.time.Date
        assert event["source"]["table"] == "customers"

    # changes, then a new column: a second, compatible schema version
    with psycopg.connect(postgres.dsn(pg_database), autocommit=True) as conn:
        conn.execute("UPDATE inventory.customers SET email = 'changed' WHERE id % 10 = 0")
        conn.execute("DELETE FROM inventory.customers WHERE id % 7 = 0")
        conn.execute("ALTER TABLE inventory.customers ADD COLUMN tier text")
        conn.execute("INSERT INTO inventory.customers SELECT g, 'late', NULL, NULL, 'gold' "
                     "FROM generate_series(201, 250) g")  # fmt: skip
    wait_until(lambda: converged(columns + ", tier"), 60, "changes and the new column")
    assert registry.get_versions(f"{topic}-value") == [1, 2]
    late = rows(postgres, target, "customers", "id, tier")
    assert late is not None and late[-1] == (250, "gold")

    def all_events() -> list[dict[str, Any]]:
        found = avro_objects(s3_client, s3_bucket)
        return [e for _, es in sorted(found.items()) for e in es]

    wait_until(lambda: sum(1 for e in all_events() if e.get("after") and
                           e["after"].get("tier") == "gold") >= 50 - 1, 60,
               "the new column's events in S3")  # fmt: skip
    with_tier = [e for e in all_events() if "tier" in (e.get("after") or {})]
    assert with_tier and all(e["after"]["tier"] in ("gold", None) for e in with_tier)
    for name in ("s3", "wh", "src"):
        _, state = hub.request("GET", f"/connectors/{name}/status")
        assert [t["state"] for t in state["tasks"]] == ["RUNNING"], state
