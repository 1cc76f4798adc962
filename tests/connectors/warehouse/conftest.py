"""The ``target`` fixture: each warehouse test runs on PostgreSQL, DuckDB and SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.connectors.warehouse.helpers import Target


@pytest.fixture(params=["postgresql", "duckdb", "sqlite"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Target]:
    if request.param == "postgresql":
        pg = request.getfixturevalue("postgres")
        db = pg.create_database()
        url = f"jdbc:postgresql://{pg.host}:{pg.port}/{db}?user={pg.user}"
        if pg.password:
            url += f"&password={pg.password}"
    elif request.param == "duckdb":
        url = f"jdbc:duckdb:{tmp_path / 'w.duckdb'}"
    else:
        url = f"jdbc:sqlite:{tmp_path / 'w.sqlite'}"
    t = Target(request.param, url)
    yield t
    for task in t.tasks:
        task.stop()
