"""Schemathesis over the real Herder and a real broker, with every check.

The fake-herder run (test_openapi_fuzz.py, all phases) proves the translation layer; this one
proves that whatever a client can send per the published schema (odd names, odd task ids, odd
configs), the runtime answers as the schema says: a documented, Connect-shaped 4xx rather than
a crash, positive data accepted (or refused for its plugin config only), negative data refused.
schemathesis' pytest integration needs the app at import time, and this app needs the broker
fixture, so the test drives each operation's hypothesis strategy itself (positive and negative)
and reports every failing operation at once.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig

from hub.rest import create_app
from hub.runtime import config as config_module
from hub.runtime import herder as herder_module
from tests.fixtures.broker import BrokerProcess
from tests.fixtures.rest_auth import TOKEN
from tests.hub.rest.test_openapi_fuzz import CONFIG, config_rejections_only

EXAMPLES = 6


def test_no_server_errors_from_the_real_herder(broker: BrokerProcess, tmp_path: Path) -> None:
    unique = uuid.uuid4().hex[:8]
    config = config_module.WorkerConfig.from_mapping(
        {
            "bootstrap.servers": broker.bootstrap,
            "config.storage.topic": f"fuzz-configs-{unique}",
            "offset.storage.topic": f"fuzz-offsets-{unique}",
            "status.storage.topic": f"fuzz-status-{unique}",
            "rest.auth.token": TOKEN,
            "file.allowed.paths": str(tmp_path),
            "rest.allowed.hosts": "testserver",  # schemathesis' ASGI client
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
        schema = schemathesis.openapi.from_asgi(
            "/openapi.json",
            create_app(herder, config),
            config=SchemathesisConfig.from_str(CONFIG),
        )
        failures = [
            failure
            for op in schema.get_all_operations()
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
            if (failure := _fuzz(op.ok(), mode))
        ]
    finally:
        herder.stop()
    assert not failures, "\n\n".join(failures)


def _fuzz(operation: Any, mode: GenerationMode) -> str | None:
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
    )
    def run(case: Any) -> None:
        case.call_and_validate(additional_checks=[config_rejections_only])

    try:
        run()
    except Unsatisfiable:
        return None  # no negative value exists for this operation (e.g. only a path string)
    except BaseException as exc:  # schemathesis' FailureGroup is a BaseExceptionGroup
        return f"{operation.label} ({mode.value}): {exc}"
    return None
