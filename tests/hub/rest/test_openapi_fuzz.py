"""Schemathesis with every check (``--checks all``) over the app's own OpenAPI schema.

Examples, coverage and fuzzing phases, positive and negative data: the schema must be exactly
as strict as the API. A request the schema allows must not be refused as malformed, a request
it forbids must be refused, every status and body must be documented, ``Allow`` must be right.

One exception, written into the config below: a body that carries a *plugin's* config (a
connector config, a pipeline template config) can be well-formed and still invalid for that
plugin (a missing ``file``, a topic that is not allowed), which no JSON schema of the whole API
can express; Kafka Connect answers those with 400 and per-key reasons, and so does Sluice. For
those operations 400 is an expected answer to positive data, and ``config_rejections_only``
then checks that such a 400 came from config validation, never from the request's shape.

The fake herder starts with one connector, so generated names sometimes hit it; random logger
PUTs change process-wide levels, so they are restored afterwards. Bounded: a few examples per
operation and mode, no deadline.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from apscheduler.schedulers.background import BackgroundScheduler
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

import spark_pipelines.templates as templates
from hub.pipelines import PipelinesService
from sluice.web import build_app
from tests.fixtures.rest_auth import TOKEN, secured
from tests.hub.rest.fake_herder import SOURCE, FakeHerder

CONFIG = """
[generation]
mode = "all"

[phases.examples]
enabled = true
[phases.coverage]
enabled = true
[phases.fuzzing]
enabled = true

[[operations]]
include-path-regex = "^/connectors(/\\\\{name\\\\}/config)?$"
include-method-regex = "^(POST|PUT)$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "404", "409"]

[[operations]]
include-path-regex = "^/pipelines(/\\\\{name\\\\})?$"
include-method-regex = "^(POST|PUT)$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "404", "409"]

[auth.openapi.HTTPBearer]
bearer = "TOKEN"
""".replace("TOKEN", TOKEN)

_herder = FakeHerder()
_herder.create_connector("c", {"connector.class": SOURCE, "file": "/tmp/f", "topic": "t"})
# The whole API a hub serves, /pipelines included (over a throw-away directory; the scheduler
# is never started, so no fuzzed schedule runs).
_pipelines = PipelinesService(
    Path(tempfile.mkdtemp(prefix="fuzz-pipelines-")), templates, BackgroundScheduler()
)
schema = schemathesis.openapi.from_asgi(
    "/openapi.json",
    # schemathesis' ASGI client calls the app "testserver"
    build_app(_herder, secured({"rest.allowed.hosts": "testserver"}), pipelines=_pipelines),
    config=SchemathesisConfig.from_str(CONFIG),
)


def config_rejections_only(ctx: Any, response: Any, case: Any) -> bool | None:
    """A schema-valid request refused with 400 must be refused for its plugin config (Kafka
    Connect's "Connector configuration is invalid ...", a template config, a name clash), not
    for its shape: FastAPI's "Invalid request" would mean the schema promised too much."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 400:
        return None
    message = str(response.json().get("message", ""))
    if message.startswith("Invalid request"):
        raise AssertionError(f"schema-valid request refused as malformed: {message}")
    return None


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
    max_examples=8,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
def test_every_check_passes(case: schemathesis.Case) -> None:
    case.call_and_validate(additional_checks=[config_rejections_only])
