"""A hub worker (``sluice connect``) against a SASL_SSL broker, configured the Kafka Connect
way (``security.protocol``, ``sasl.jaas.config``, a PEM truststore): its internal topics and a
file source -> file sink pipeline all go over SCRAM-SHA-512 + TLS, and the password never
appears in its log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.fixtures.broker import wait_until
from tests.fixtures.hub import create_connector, free_port
from tests.fixtures.secure_broker import SCRAM_PASSWORD, SCRAM_USER, SecureBroker

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_file_pipeline_over_sasl_ssl(secure_broker: SecureBroker, tmp_path: Path) -> None:
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line-{i}\n" for i in range(500)))
    worker = tmp_path / "worker.json"
    worker.write_text(json.dumps({
        "replication.factor": 1, "offset.flush.interval.ms": 200,
        "file.allowed.paths": str(tmp_path),
        "config.storage.topic": "sec-configs", "offset.storage.topic": "sec-offsets",
        "status.storage.topic": "sec-status", "group.id": "sec-connect",
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
                            f'username="{SCRAM_USER}" password="{SCRAM_PASSWORD}";',
        "ssl.truststore.type": "PEM", "ssl.truststore.location": str(secure_broker.tls.ca),
    }))  # fmt: skip
    port = free_port()
    log = tmp_path / "connect.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sluice", "connect",
             "--bootstrap", secure_broker.bootstrap_of("SASL_SSL"), "--rest-port", str(port),
             "--config", str(worker), "--data-dir", str(tmp_path / "data")],
            stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ),
        )  # fmt: skip
    try:
        wait_until(lambda: "hub listening" in log.read_text(), 60, "hub listening")
        token = (tmp_path / "data" / "hub.token").read_text().strip()
        for name, config in (
            ("sec-src", {"connector.class": SOURCE, "file": str(source), "topic": "sec-lines"}),
            ("sec-snk", {"connector.class": SINK, "file": str(sink), "topics": "sec-lines"}),
        ):
            create_connector(port, token, name, config)
        expected = {f"line-{i}" for i in range(500)}
        wait_until(lambda: set(_lines(sink)) >= expected, 60, "every line in the sink")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    assert SCRAM_PASSWORD not in log.read_text()
