"""Schemathesis: requests generated from the app's own OpenAPI schema never get a 500.

Bounded (a few dozen examples per operation, no deadline) so the whole run stays well under
30 s. The fake herder starts with one connector so generated names sometimes hit it; random
logger PUTs change process-wide levels, so the levels are restored afterwards.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402

from hub.rest import create_app  # noqa: E402
from tests.hub.rest.fake_herder import SOURCE, FakeHerder  # noqa: E402

_herder = FakeHerder()
_herder.create_connector("c", {"connector.class": SOURCE, "file": "/tmp/f", "topic": "t"})
schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(_herder, {}))


@pytest.fixture(scope="module", autouse=True)
def _restore_log_levels() -> Iterator[None]:
    manager = logging.Logger.manager
    before = {
        name: lg.level for name, lg in manager.loggerDict.items() if isinstance(lg, logging.Logger)
    }
    root_level = logging.getLogger().level
    yield
    for name, logger in list(manager.loggerDict.items()):
        if isinstance(logger, logging.Logger):
            logger.setLevel(before.get(name, logging.NOTSET))
    logging.getLogger().setLevel(root_level)


@schema.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_server_errors(case: schemathesis.Case) -> None:
    response = case.call()
    case.validate_response(response, checks=[not_a_server_error])
