"""Cluster mode: SCRAM users live in ZooKeeper, so a user created through one broker logs in
on another, and Metadata over the SASL listener lists every broker's SASL address."""

from __future__ import annotations

import json
import re
from pathlib import Path

from confluent_kafka.admin import AdminClient

from tests.broker.cluster.cluster import Cluster
from tests.fixtures.broker import wait_until
from tests.fixtures.secure_broker import create_scram_user


def _sasl_port(broker: object) -> int:
    log = broker.log(since_start=True)  # type: ignore[attr-defined]
    match = re.search(r"SASL_PLAINTEXT://127\.0\.0\.1:(\d+)", log)
    assert match, log[-2000:]
    return int(match.group(1))


def test_user_created_on_one_broker_logs_in_on_another(tmp_path: Path, zk_chroot: str) -> None:
    cluster = Cluster(
        tmp_path, zk_chroot, 2,
        "-o", "listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "-o", "sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512",
    )  # fmt: skip
    try:
        cluster.start()
        one, two = cluster.brokers[1], cluster.brokers[2]
        create_scram_user(one.bootstrap, "carol", "carol-secret")
        settings = {
            "bootstrap.servers": f"127.0.0.1:{_sasl_port(two)}",
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "carol", "sasl.password": "carol-secret",
        }  # fmt: skip

        def brokers_seen() -> object:
            try:
                return AdminClient(settings).list_topics(timeout=3).brokers
            except Exception:
                return None  # the watch on broker 2 may not have fired yet

        brokers = wait_until(brokers_seen, 20, "carol to log in on broker 2")
        ports = sorted(b.port for b in brokers.values())  # type: ignore[attr-defined]
        assert ports == sorted([_sasl_port(one), _sasl_port(two)])
        # Kafka's layout; other keys of the user's config (quotas) survive credential changes
        raw, _ = cluster._zk.get("/config/users/carol")
        doc = json.loads(raw)
        assert set(doc["config"]) == {"SCRAM-SHA-256", "SCRAM-SHA-512"}
        assert "carol-secret" not in raw.decode()
        doc["config"]["producer_byte_rate"] = "1024"
        cluster._zk.set("/config/users/carol", json.dumps(doc).encode())
        create_scram_user(two.bootstrap, "carol", "new-secret")
        config = json.loads(cluster._zk.get("/config/users/carol")[0])["config"]
        assert config["producer_byte_rate"] == "1024" and "SCRAM-SHA-512" in config
    finally:
        cluster.stop()
