"""compose/quickstart.yml's pipelines, with its ``sluice`` service run as a local process.

``sluice up`` runs the command line of the ``sluice`` service with its worker properties; the
test fixtures stand in for the other services (a PostgreSQL server with logical decoding for
``postgres``, given compose/config/postgres-init.sql as the image's init step would; moto's S3
server for ``minio``, with the bucket ``minio-init`` creates). compose/init-connectors.sh
creates the three quickstart connectors from their files, with only the addresses of the
stand-ins put in, and compose/log-producer.sh writes the application's log. Then the sample
orders (and one inserted afterwards) must reach the bucket, and the log lines the topic.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.compose._compose import load, services
from tests.compose._local import (
    LocalService,
    Mapping,
    connector_files,
    init_connectors,
    localize,
    produce,
)
from tests.fixtures.broker import wait_until
from tests.fixtures.hub import free_port
from tests.fixtures.postgres import PostgresServer
from tests.fixtures.s3 import S3Server

# `sluice up`, a CDC snapshot and S3 rotations:
# minutes on a busy machine, more than the suite's default 2.
pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def quickstart(tmp_path: Path) -> Iterator[tuple[LocalService, Mapping, int]]:
    service = services(load("quickstart.yml"))["sluice"]
    (tmp_path / "app-logs").mkdir()
    mapping = Mapping({
        "/var/lib/sluice": str(tmp_path / "data"),
        "/var/log/app": str(tmp_path / "app-logs"),
        "0.0.0.0": "127.0.0.1",
    })  # fmt: skip
    rest_port, broker_port = free_port(), free_port()
    ports = ["--rest-port", str(rest_port), "--broker-port", str(broker_port)]
    args = [*localize(service, mapping, tmp_path), *ports, "--schema-registry-port", "0"]
    probe = ["http", f"http://127.0.0.1:{rest_port}/health"]
    hub = LocalService("sluice", args, tmp_path / "sluice.log", probe)
    hub.rest_port = rest_port
    hub.start()
    try:
        wait_until(hub.healthy, 90, "sluice up healthy")
        yield hub, mapping, broker_port
    finally:
        hub.stop()


def _objects(s3: Any, bucket: str) -> str:
    listed = s3.list_objects_v2(Bucket=bucket).get("Contents", [])
    return "".join(
        s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read().decode() for o in listed
    )


def test_quickstart_runs_cdc_to_s3_and_the_log_tail(
    quickstart: tuple[LocalService, Mapping, int],
    postgres: PostgresServer,
    pg_database: str,
    s3_server: S3Server,
    tmp_path: Path,
) -> None:
    hub, mapping, broker_port = quickstart
    all_services = services(load("quickstart.yml"))
    # postgres: the compose file's user is the image's superuser; its init script runs as it.
    pg = all_services["postgres"]
    user = pg.environment()["POSTGRES_USER"]
    postgres.execute(f"DROP ROLE IF EXISTS {user}")
    postgres.execute(f"CREATE ROLE {user} LOGIN SUPERUSER")
    init_sql = pg.host_path("/docker-entrypoint-initdb.d/10-shop.sql")
    assert init_sql is not None
    postgres.execute(init_sql.read_text(), pg_database, user=user)
    # minio-init: the bucket the S3 sink writes to.
    s3 = s3_server.client()
    files = connector_files(all_services["connectors-init"])
    bodies = {name: json.loads(mapping(path.read_text())) for name, path in files.items()}
    bucket = bodies["orders-to-s3"]["config"]["s3.bucket.name"]
    s3.create_bucket(Bucket=bucket)
    # Only the stand-ins' addresses change in the connectors (Docker DNS names there).
    bodies["shop-cdc"]["config"].update({
        "database.hostname": postgres.host, "database.port": str(postgres.port),
        "database.dbname": pg_database,
    })  # fmt: skip
    bodies["orders-to-s3"]["config"]["store.url"] = s3_server.endpoint_url

    created = init_connectors(
        all_services["connectors-init"], bodies, mapping, tmp_path, hub.rest_port
    )
    assert all(f"created connector {name}" in created for name in bodies), created
    lines = produce(tmp_path / "app-logs" / "shop.log", 50)

    wait_until(
        lambda: all(c in _objects(s3, bucket) for c in ("ada", "grace", "linus")),
        90, "the snapshot of the sample orders in the bucket",
    )  # fmt: skip
    postgres.execute("INSERT INTO orders (customer, amount) VALUES ('newcomer', 1)", pg_database)
    wait_until(lambda: "newcomer" in _objects(s3, bucket), 90, "a new order in the bucket")

    def logged() -> bool:
        done = subprocess.run(
            [sys.executable, "-m", "sluice", "consume", "app-logs", "-n", str(len(lines)),
             "-b", f"127.0.0.1:{broker_port}"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        return done.returncode == 0 and set(done.stdout.splitlines()) == set(lines)

    wait_until(logged, 60, "the application's log lines in topic app-logs")
