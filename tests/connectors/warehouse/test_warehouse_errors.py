"""Setup problems fail the task with a message saying what to fix; a broken connection is
retriable (direct task tests with an in-test context, not through the runtime)."""

from __future__ import annotations

import socket

import psycopg
import pytest

from connectors.warehouse.sink_task import WarehouseSinkTask
from hub.api import ConnectError, RetriableError, TopicPartition
from tests.connectors.warehouse.helpers import Context, rec
from tests.fixtures.postgres import PASSWORD_ROLE


def start(url: str, **extra: str) -> WarehouseSinkTask:
    raw = {"name": "wh", "topics": "orders", "connection.url": url, **extra}
    task = WarehouseSinkTask(Context(raw))  # type: ignore[arg-type]
    task.start(raw)
    return task


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_database_says_what_to_check() -> None:
    with pytest.raises(ConnectError, match=r"cannot connect to .*check connection\.url"):
        start(f"jdbc:postgresql://127.0.0.1:{free_port()}/db?user=x&connectTimeout=2")


def test_wrong_password_is_a_connect_error_without_the_password(postgres) -> None:
    postgres.create_role(PASSWORD_ROLE, password="right")
    url = f"jdbc:postgresql://{postgres.host}:{postgres.port}/postgres"
    with pytest.raises(ConnectError, match=r"connection\.password") as info:
        start(url, **{"connection.user": PASSWORD_ROLE, "connection.password": "wrong"})
    assert "wrong" not in str(info.value)
    start(url, **{"connection.user": PASSWORD_ROLE, "connection.password": "right"}).stop()


def test_missing_database_is_a_connect_error(postgres) -> None:
    with pytest.raises(ConnectError, match="does_not_exist"):
        start(f"jdbc:postgresql://{postgres.host}:{postgres.port}/does_not_exist?user=postgres")


def kill_sessions(postgres, dbname: str) -> None:
    with psycopg.connect(postgres.dsn(dbname), autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (dbname,),
        )


def test_a_killed_connection_makes_put_retriable(postgres, pg_database) -> None:
    url = f"jdbc:postgresql://{postgres.host}:{postgres.port}/{pg_database}?user={postgres.user}"
    task = start(url, **{"auto.create": "true", "insert.mode": "upsert", "pk.mode": "kafka",
                         "batch.size": "1"})  # fmt: skip
    try:
        task.put([rec(0, {"id": 1})])
        task.flush({})
        kill_sessions(postgres, pg_database)
        task.put([rec(1, {"id": 2})])  # its transaction fails on the writer thread...
        assert task._inflight is not None
        task._inflight[0].exception()  # (lets it end without collecting it)
        batch = [rec(2, {"id": 3})]
        with pytest.raises(RetriableError, match="database unavailable"):
            task.put(batch)  # ...which the next put reports, taking none of its own records
        tp = TopicPartition("orders", 0)
        assert task.pre_commit({tp: 2}) == {tp: 2}  # reconnected: the failed batch, again
        task.put(batch)  # the worker retries the same batch
        assert task.pre_commit({tp: 3}) == {tp: 3}
        with psycopg.connect(postgres.dsn(pg_database)) as conn:
            assert conn.execute("SELECT count(*) FROM orders").fetchone() == (3,)
    finally:
        task.stop()


def test_pre_commit_returns_only_committed_offsets(postgres, pg_database) -> None:
    url = f"jdbc:postgresql://{postgres.host}:{postgres.port}/{pg_database}?user={postgres.user}"
    task = start(url, **{"auto.create": "true"})
    tp = TopicPartition("orders", 0)
    try:
        task.put([rec(0, {"id": 1}), rec(1, {"id": 2})])
        assert task.pre_commit({tp: 2}) == {tp: 2}
        task.put([rec(2, {"id": 3}), rec(3, {"id": 4})])  # pending: below batch.size
        kill_sessions(postgres, pg_database)
        assert task.pre_commit({tp: 4}) == {tp: 2}  # not committed: not confirmed
        assert task.pre_commit({tp: 4}) == {tp: 4}  # reconnected, written, confirmed

        with psycopg.connect(postgres.dsn(pg_database)) as conn:
            assert conn.execute("SELECT count(*) FROM orders").fetchone() == (4,)
    finally:
        task.stop()
