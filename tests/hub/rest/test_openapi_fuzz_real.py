"""Schemathesis over the real Herder and a real broker: generated requests never get a 500.

The fake-herder run (test_openapi_fuzz.py) proves the translation layer; this one proves that
whatever a client can send per the published schema (odd names, odd task ids, odd configs),
the runtime answers with a Connect-shaped 4xx rather than crashing. schemathesis' pytest
integration needs the app at import time, and this app needs the broker fixture, so the test
drives each operation's hypothesis strategy itself and reports every failing operation at once.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from hub.rest import create_app
from tests.fixtures.broker import BrokerProcess

schemathesis = pytest.importorskip("schemathesis")
herder_module = pytest.importorskip("hub.runtime.herder")
config_module = pytest.importorskip("hub.runtime.config")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402

EXAMPLES = 10


def test_no_server_errors_from_the_real_herder(broker: BrokerProcess, tmp_path: Path) -> None:
    unique = uuid.uuid4().hex[:8]
    config = config_module.WorkerConfig.from_mapping(
        {
            "bootstrap.servers": broker.bootstrap,
            "config.storage.topic": f"fuzz-configs-{unique}",
            "offset.storage.topic": f"fuzz-offsets-{unique}",
            "status.storage.topic": f"fuzz-status-{unique}",
        }
    )
    herder = herder_module.Herder(config)
    herder.start()
    try:
        source = tmp_path / "in.txt"
        source.write_text("line\n")
        herder.create_connector(
            "c", {"connector.class": "FileStreamSource", "file": str(source), "topic": unique}
        )
        schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(herder, config))
        failures = [failure for op in schema.get_all_operations() if (failure := _fuzz(op.ok()))]
    finally:
        herder.stop()
    assert not failures, "\n\n".join(failures)


def _fuzz(operation: Any) -> str | None:
    @given(case=operation.as_strategy())
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
    )
    def run(case: Any) -> None:
        case.validate_response(case.call(), checks=[not_a_server_error])

    try:
        run()
    except Exception as exc:
        return f"{operation.label}: {exc}"
    return None
