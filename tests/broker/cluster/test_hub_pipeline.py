"""The hub (``sluice connect --bootstrap`` the three brokers) runs a file pipeline through a
leader kill with nothing lost (at-least-once: duplicates are allowed, gaps are not)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.broker.cluster.cluster import Cluster
from tests.fixtures.hub import create_connector, free_port

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_file_pipeline_survives_a_leader_kill(cluster: Cluster, tmp_path: Path) -> None:
    c = cluster
    c.create_topic("lines", partitions=1, rf=3)
    total = 20_000
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    half = total // 2
    source.write_text("".join(f"line-{i}\n" for i in range(half)))
    worker = tmp_path / "worker.json"
    worker.write_text(json.dumps({"replication.factor": 3, "offset.flush.interval.ms": 200,
                                  "file.allowed.paths": str(tmp_path)}))  # fmt: skip
    port = free_port()
    log = tmp_path / "connect.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sluice", "connect", "--bootstrap", c.bootstrap,
             "--rest-port", str(port), "--config", str(worker),
             "--data-dir", str(tmp_path / "data")],  # its generated REST token lands there
            stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ),
        )  # fmt: skip
    try:
        c.wait(lambda: "hub listening" in log.read_text(), "hub listening", 60)
        for name, config in (
            ("src", {"connector.class": SOURCE, "file": str(source), "topic": "lines"}),
            ("snk", {"connector.class": SINK, "file": str(sink), "topics": "lines"}),
        ):
            token = (tmp_path / "data" / "hub.token").read_text().strip()
            create_connector(port, token, name, config)
        c.wait(lambda: len(_lines(sink)) > 0, "first lines in the sink", 60)
        c.brokers[c.leader("lines", 0)].kill()
        with open(source, "a") as f:  # the second half flows only after the kill
            f.write("".join(f"line-{i}\n" for i in range(half, total)))
        expected = {f"line-{i}" for i in range(total)}
        c.wait(lambda: set(_lines(sink)) >= expected, "every line after the leader kill", 120)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
