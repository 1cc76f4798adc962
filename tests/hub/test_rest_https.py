"""The REST API over HTTPS (Kafka Connect's ``listeners=https://...`` with a PEM keystore):
``sluice connect`` serves it with TLS, plain HTTP to that port gets nothing, and an https
listener without a keystore is refused by name before anything starts."""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from hub.runtime.config import WorkerConfig
from hub.runtime.errors import WorkerConfigError
from tests.fixtures.broker import BrokerProcess, wait_until
from tests.fixtures.hub import free_port
from tests.fixtures.tls import TlsFiles


def test_https_listener_needs_a_keystore() -> None:
    with pytest.raises(WorkerConfigError, match="listeners"):
        WorkerConfig.from_mapping({"listeners": "https://127.0.0.1:8443"})
    config = WorkerConfig.from_mapping({"listeners": "http://127.0.0.1:9000"})
    assert (config.rest_port, config.rest_scheme, config.rest_tls()) == (9000, "http", None)


def test_rest_api_over_https(broker: BrokerProcess, tmp_path: Path, tls_files: TlsFiles) -> None:
    port = free_port()
    worker = tmp_path / "worker.json"
    worker.write_text(json.dumps({
        "listeners": f"https://127.0.0.1:{port}",
        "listeners.https.ssl.keystore.type": "PEM",
        "listeners.https.ssl.keystore.location": str(tls_files.server_keystore),
        "group.id": "https-test", "config.storage.topic": "https-configs",
        "offset.storage.topic": "https-offsets", "status.storage.topic": "https-status",
    }))  # fmt: skip
    log = tmp_path / "connect.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sluice", "connect", "--bootstrap", broker.bootstrap,
             "--config", str(worker), "--data-dir", str(tmp_path / "data")],
            stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ),
        )  # fmt: skip
    try:
        wait_until(lambda: "hub listening" in log.read_text(), 60, "hub listening")
        assert "scheme=https" in log.read_text()
        token = (tmp_path / "data" / "hub.token").read_text().strip()
        context = ssl.create_default_context(cafile=str(tls_files.ca))
        request = urllib.request.Request(
            f"https://127.0.0.1:{port}/connectors", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            assert response.status == 200 and json.loads(response.read()) == []
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
