"""/admin/loggers: Kafka level names over Python logging."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from hub.rest.loggers import kafka_level, python_level
from tests.hub.rest.test_connectors import assert_error

NS = "sluice_test_ns"


@pytest.fixture(autouse=True)
def _restore_levels() -> Iterator[None]:
    names = [NS, f"{NS}.child", f"{NS}.child.grand", f"{NS}.pinned"]
    loggers = [logging.getLogger(name) for name in names]
    loggers[3].setLevel(logging.ERROR)
    root_level = logging.getLogger().level
    yield
    for logger in loggers:
        logger.setLevel(logging.NOTSET)
    logging.getLogger().setLevel(root_level)


@pytest.mark.parametrize(
    ("kafka", "python"),
    [("TRACE", 5), ("debug", 10), ("INFO", 20), ("WARN", 30), ("WARNING", 30), ("ERROR", 40)],
)
def test_level_mapping(kafka: str, python: int) -> None:
    assert python_level(kafka) == python
    assert kafka_level(python) == {"WARNING": "WARN", "DEBUG": "DEBUG"}.get(
        kafka.upper(), kafka.upper()
    )
    assert kafka_level(logging.CRITICAL) == "FATAL"
    assert kafka_level(python_level("OFF")) == "OFF"


def test_list_includes_root_and_known_loggers(client: TestClient) -> None:
    loggers = client.get("/admin/loggers").json()
    assert "root" in loggers and f"{NS}.pinned" in loggers
    assert loggers[f"{NS}.pinned"] == {"level": "ERROR", "last_modified": None}
    assert f"{NS}.child" not in loggers  # inherits: listed only when asked for by name
    inherited = kafka_level(logging.getLogger(f"{NS}.child").getEffectiveLevel())
    assert client.get(f"/admin/loggers/{NS}.child").json()["level"] == inherited


def test_get_logger(client: TestClient) -> None:
    assert client.get(f"/admin/loggers/{NS}.pinned").json()["level"] == "ERROR"
    assert_error(client.get("/admin/loggers/never.created.anywhere"), 404)


def test_set_level_applies_to_namespace(client: TestClient) -> None:
    response = client.put(f"/admin/loggers/{NS}", json={"level": "DEBUG"})
    assert response.status_code == 200
    affected = response.json()
    assert affected == sorted([NS, f"{NS}.child", f"{NS}.child.grand", f"{NS}.pinned"])
    assert logging.getLogger(f"{NS}.child.grand").getEffectiveLevel() == logging.DEBUG
    assert logging.getLogger(f"{NS}.pinned").level == logging.DEBUG
    after = client.get(f"/admin/loggers/{NS}.child").json()
    assert after["level"] == "DEBUG" and isinstance(after["last_modified"], int)


def test_set_root_and_cluster_scope(client: TestClient) -> None:
    response = client.put("/admin/loggers/root?scope=cluster", json={"level": "WARN"})
    assert response.status_code == 204
    assert logging.getLogger().level == logging.WARNING


def test_set_level_rejects_unknown_levels(client: TestClient) -> None:
    assert_error(client.put(f"/admin/loggers/{NS}", json={"level": "LOUD"}), 400, fields=("level",))
    assert_error(client.put(f"/admin/loggers/{NS}", json={}), 400, fields=("level",))
