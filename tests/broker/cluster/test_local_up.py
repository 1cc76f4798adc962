"""``sluice up --brokers 3``: ZooKeeper, three brokers and the hub from one command."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from confluent_kafka.admin import AdminClient

from tests.fixtures.broker import wait_until
from tests.fixtures.hub import free_port


def test_up_with_three_brokers(tmp_path: Path) -> None:
    log = tmp_path / "up.log"
    rest = free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sluice", "up", "--data-dir", str(tmp_path / "data"),
             "--brokers", "3", "--broker-port", "0", "--rest-port", str(rest),
             "--zookeeper-port", str(free_port()), "--schema-registry-port", "0"],
            stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ),
        )  # fmt: skip
    try:
        wait_until(lambda: "hub listening" in log.read_text() or proc.poll() is not None, 120,
                   "hub listening")  # fmt: skip
        text = log.read_text()
        assert proc.poll() is None, text[-4000:]
        bootstrap = re.search(r"local cluster up brokers=(\S+)", text)
        assert bootstrap, text[-4000:]
        admin = AdminClient({"bootstrap.servers": bootstrap.group(1)})
        nodes = admin.describe_cluster(request_timeout=20).result(30).nodes
        assert sorted(n.id for n in nodes) == [1, 2, 3]
        internal = admin.list_topics(timeout=20).topics
        configs = [t for t in internal if "config" in t]
        assert configs and all(
            len(p.replicas) == 3 for t in configs for p in internal[t].partitions.values()
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(90)
    assert code == 0, log.read_text()[-4000:]
