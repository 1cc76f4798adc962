"""``sluice up --brokers 3``: ZooKeeper, three brokers and the hub from one command, with the
default security of ``sluice up`` (docs/security.md, "The default `sluice up` broker"):
anonymous clients on the users' listeners, the hub (and the brokers between themselves) as
``sluice-hub`` on the ``HUB`` listeners, the hub's topics and the cluster's ACLs out of anonymous
reach, and ZooKeeper's nodes out of everyone's but ``sluice-hub``'s (digest authentication).
One start serves the tests that take ``up``; they only read and add."""

from __future__ import annotations

import logging
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError, NoNodeError
from kazoo.security import OPEN_ACL_UNSAFE, make_digest_acl

from tests.fixtures.broker import wait_until
from tests.fixtures.hub import create_connector, free_port

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
_HUB_LISTENER = re.compile(r"broker listening .*HUB://([\d.]+:\d+)")


@dataclass
class Up:
    """A running ``sluice up --brokers 3`` and what its log and data directory tell."""

    proc: subprocess.Popen[bytes]
    log: Path
    data_dir: Path
    rest_port: int
    zk_port: int

    def text(self) -> str:
        return self.log.read_text()

    @property
    def bootstrap(self) -> str:
        """The users' (PLAINTEXT) listeners of the three brokers."""
        found = re.search(r"local cluster up brokers=(\S+)", self.text())
        assert found, self.text()[-4000:]
        return found.group(1)

    @property
    def password(self) -> str:
        return (self.data_dir / "hub-broker.password").read_text().strip()

    def hub_client_config(self) -> dict[str, str]:
        """librdkafka settings that log in as the hub on the brokers' ``HUB`` listeners."""
        hub_listeners = _HUB_LISTENER.findall(self.text())
        assert len(hub_listeners) == 3, self.text()[-4000:]
        return {
            "bootstrap.servers": ",".join(hub_listeners), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "sluice-hub",
            "sasl.password": self.password,
        }  # fmt: skip


def _start(root: Path, log_name: str = "up.log") -> Up:
    """``sluice up --brokers 3`` on ``root / "data"`` (its output in ``root / log_name``)."""
    log, rest, zk_port = root / log_name, free_port(), free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sluice", "up", "--data-dir", str(root / "data"),
             "--brokers", "3", "--broker-port", "0", "--rest-port", str(rest),
             "--zookeeper-port", str(zk_port), "--schema-registry-port", "0"],
            stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ),
        )  # fmt: skip
    return Up(proc, log, root / "data", rest, zk_port)


def _wait_for_hub(running: Up) -> None:
    wait_until(lambda: "hub listening" in running.text() or running.proc.poll() is not None,
               120, "hub listening")  # fmt: skip
    assert running.proc.poll() is None, running.text()[-4000:]


def _stop(running: Up) -> None:
    running.proc.send_signal(signal.SIGTERM)
    code = running.proc.wait(90)
    assert code == 0, running.text()[-4000:]


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    running = _start(tmp_path_factory.mktemp("up"))
    try:
        _wait_for_hub(running)
        yield running
    finally:
        _stop(running)


def _zookeeper(port: int, password: str | None = None) -> KazooClient:
    """A started kazoo client on the cluster's ZooKeeper; logged in as sluice-hub with
    ``password``, else anonymous."""
    auth = [("digest", f"sluice-hub:{password}")] if password is not None else None
    zk = KazooClient(hosts=f"127.0.0.1:{port}", auth_data=auth)
    zk.start(timeout=30)
    return zk


def _close(zk: KazooClient) -> None:
    zk.stop()
    zk.close()


def _delivery_errors(bootstrap: str, topic: str, values: list[bytes], **extra: Any) -> list[Any]:
    """Produces ``values``; the delivery errors (None for each success)."""
    producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 15000, **extra})
    results: list[Any] = []
    for value in values:
        producer.produce(topic, value, on_delivery=lambda err, _msg: results.append(err))
    producer.flush(20)
    return results


def _consume(config: dict[str, Any], topic: str, count: int) -> list[bytes]:
    consumer = Consumer({**config, "group.id": f"g-{uuid.uuid4().hex[:6]}",
                         "auto.offset.reset": "earliest"})  # fmt: skip
    consumer.subscribe([topic])
    got: list[bytes] = []

    def enough() -> bool:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got.append(msg.value())
        return len(got) >= count

    try:
        wait_until(enough, 60, f"{count} records of {topic}")
    finally:
        consumer.close()
    return got


def test_three_brokers_and_the_hub_on_their_hub_listeners(up: Up) -> None:
    admin = AdminClient({"bootstrap.servers": up.bootstrap})
    nodes = admin.describe_cluster(request_timeout=20).result(30).nodes
    assert sorted(n.id for n in nodes) == [1, 2, 3]
    # the brokers registered their HUB listener as the inter-broker one
    registered = re.findall(
        r"broker listening .*advertised=(\S+) listeners=.*HUB://(\S+) ", up.text()
    )
    assert len(registered) == 3 and all(adv == hub for adv, hub in registered), registered
    # the internal topics are the hub's: it sees them (RF 3), an anonymous client does not
    topics = AdminClient(up.hub_client_config()).list_topics(timeout=20).topics
    configs = [t for t in topics if "config" in t]
    assert configs and all(
        len(p.replicas) == 3 for t in configs for p in topics[t].partitions.values()
    )
    assert "sluice-connect-configs" not in admin.list_topics(timeout=20).topics

    # a connector created through REST runs; what it writes anyone may read
    files = up.data_dir.parent / "files"
    files.mkdir(exist_ok=True)
    source, topic = files / "in.txt", f"lines-{uuid.uuid4().hex[:6]}"
    source.write_text("".join(f"line-{i}\n" for i in range(10)))
    token = (up.data_dir / "hub.token").read_text().strip()
    config = {"connector.class": SOURCE, "file": str(source), "topic": topic}
    create_connector(up.rest_port, token, "src", config)
    got = _consume({"bootstrap.servers": up.bootstrap}, topic, 10)
    assert [f'"payload":"line-{i}"'.encode() in v for i, v in enumerate(got)] == [True] * 10


def test_anonymous_clients_use_a_replicated_topic(up: Up) -> None:
    admin = AdminClient({"bootstrap.servers": up.bootstrap})
    topic = f"orders-{uuid.uuid4().hex[:6]}"
    admin.create_topics([NewTopic(topic, 1, 3)])[topic].result(20)

    def in_sync() -> bool:
        meta = admin.list_topics(topic, timeout=10).topics[topic]
        return bool(meta.partitions) and len(meta.partitions[0].isrs) == 3

    wait_until(in_sync, 30, f"{topic} to have 3 in-sync replicas")
    # acks=all: acknowledged once both followers fetched the records (as sluice-hub)
    extra = {"acks": "all", "enable.idempotence": True}  # IDEMPOTENT_WRITE is everyone's
    assert _delivery_errors(up.bootstrap, topic, [b"a", b"b"], **extra) == [None, None]
    assert in_sync()
    assert _consume({"bootstrap.servers": up.bootstrap}, topic, 2) == [b"a", b"b"]


def test_anonymous_clients_cannot_reach_the_hubs_topics_nor_grant_themselves(up: Up) -> None:
    # four records in the config topic would create a connector
    errors = _delivery_errors(up.bootstrap, "sluice-connect-configs", [b"x"])
    assert errors[0] is not None
    assert errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    acl = AclBinding(ResourceType.TOPIC, "sluice-connect-configs", ResourcePatternType.LITERAL,
                     "User:ANONYMOUS", "*", AclOperation.ALL, AclPermissionType.ALLOW)  # fmt: skip
    admin = AdminClient({"bootstrap.servers": up.bootstrap})
    future = admin.create_acls([acl], request_timeout=15)[acl]
    with pytest.raises(KafkaException) as refused:
        future.result(20)
    assert refused.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED

    # everyone may only what ordinary clients need of the cluster: no ALTER, no CLUSTER_ACTION
    on_cluster = AclBindingFilter(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.ANY,
                                  None, None, AclOperation.ANY, AclPermissionType.ANY)  # fmt: skip
    hub_admin = AdminClient(up.hub_client_config())
    found = hub_admin.describe_acls(on_cluster, request_timeout=15).result(20)
    assert sorted((b.principal, b.operation.name, b.permission_type.name) for b in found) == [
        ("User:*", op, "ALLOW")
        for op in sorted(("CREATE", "DESCRIBE", "DESCRIBE_CONFIGS", "IDEMPOTENT_WRITE"))
    ]


def test_the_hubs_password_stays_in_its_file(up: Up) -> None:
    path = up.data_dir / "hub-broker.password"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    password = up.password
    assert password and password not in up.text()
    assert password not in (up.data_dir / "zookeeper" / "zookeeper.log").read_text()


def test_zookeeper_is_the_hubs_alone(up: Up) -> None:
    """No one but sluice-hub reads or writes a node under /sluice, nor changes its ACL: the
    reserved ACLs, the hub's credential and the brokers' registrations are out of reach."""
    anonymous = _zookeeper(up.zk_port)
    try:
        with pytest.raises(NoAuthError):
            anonymous.get_children("/sluice/kafka-acl/Topic")
        with pytest.raises(NoAuthError):
            anonymous.create("/sluice/kafka-acl/Topic/x", b'{"version":1,"acls":[]}')
        with pytest.raises(NoAuthError):
            anonymous.set("/sluice/kafka-acl/Topic/sluice-connect-configs", b"{}")
        with pytest.raises(NoAuthError):
            anonymous.get("/sluice/config/users/sluice-hub")
        with pytest.raises(NoAuthError):
            anonymous.create("/sluice/config/users/mallory", b"{}")
        with pytest.raises(NoAuthError):
            anonymous.set_acls("/sluice", OPEN_ACL_UNSAFE)
        with pytest.raises(NoAuthError):
            anonymous.delete("/sluice", recursive=True)
    finally:
        _close(anonymous)

    # the hub's login may all of it (so the refusals above are ACLs, not missing nodes), and
    # every node it or the brokers created carries exactly its ACL
    hub = _zookeeper(up.zk_port, up.password)
    try:
        assert "sluice-connect-configs" in hub.get_children("/sluice/kafka-acl/Topic")
        hub.create("/sluice/zkauth-probe", b"x")
        hub.delete("/sluice/zkauth-probe")
        owned = [make_digest_acl("sluice-hub", up.password, all=True)]
        unowned, pending = [], ["/sluice"]
        while pending:
            path = pending.pop()
            try:
                if hub.get_acls(path)[0] != owned:
                    unowned.append(path)
                pending.extend(f"{path}/{child}" for child in hub.get_children(path))
            except NoNodeError:  # a change notification consumed meanwhile
                continue
        assert hub.exists("/sluice/brokers/ids/3") and hub.exists("/sluice/controller")
        assert unowned == []
    finally:
        _close(hub)


def test_the_password_is_on_no_command_line(up: Up) -> None:
    """Brokers get their config (the ZooKeeper and SCRAM password with it) through a pipe."""
    password = up.password.encode()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                assert password not in (proc / "cmdline").read_bytes(), proc.name
            except OSError:  # gone meanwhile, or not ours to read
                continue


def test_a_restart_keeps_zookeeper_and_a_lost_password_is_one_line(
    tmp_path: Path,
) -> None:
    """Stopped and started again, the cluster finds its digest-ACL'd nodes with the same
    password; with the password file gone, the start stops with a line saying what to do."""
    first = _start(tmp_path, "first.log")
    try:
        _wait_for_hub(first)
    finally:
        _stop(first)
    again = _start(tmp_path, "again.log")
    try:
        _wait_for_hub(again)
        topics = AdminClient(again.hub_client_config()).list_topics(timeout=20).topics
        assert "sluice-connect-configs" in topics
    finally:
        _stop(again)

    (tmp_path / "data" / "hub-broker.password").unlink()
    lost = _start(tmp_path, "lost.log")
    assert lost.proc.wait(90) == 1, lost.text()[-4000:]
    text = lost.text()
    assert "does not belong to the sluice-hub login" in text, text[-4000:]
    assert f"restore {tmp_path / 'data' / 'hub-broker.password'}" in text
    assert "Traceback" not in text
    assert lost.password not in text  # the new one
    with pytest.raises(OSError):  # and ZooKeeper stopped with it
        socket.create_connection(("127.0.0.1", lost.zk_port), timeout=5).close()


def test_zookeeper_is_prepared_once(zk_chroot: str, tmp_path: Path) -> None:
    """A restart finds the credential and the ACLs in ZooKeeper and writes neither again."""
    from sluice import hub_login

    hosts, chroot = zk_chroot.split("/", 1)
    bare = KazooClient(hosts=hosts)
    bare.start(timeout=30)
    bare.ensure_path("/" + chroot)
    bare.stop()
    zk = KazooClient(hosts=zk_chroot)
    zk.start(timeout=30)
    try:
        login = hub_login.cluster_login(tmp_path)
        acls = [*hub_login.cluster_acls(), *hub_login.reserved_acls(["a-configs"], "grp")]
        hub_login.prepare_zookeeper(zk, login, acls)
        _, user = zk.get("/config/users/sluice-hub")
        changes = zk.get_children("/kafka-acl-changes")
        hub_login.prepare_zookeeper(zk, hub_login.cluster_login(tmp_path), acls)
        assert zk.get("/config/users/sluice-hub")[1].version == user.version
        assert zk.get_children("/kafka-acl-changes") == changes
        assert login.password.encode() not in zk.get("/config/users/sluice-hub")[0]
    finally:
        zk.stop()
        zk.close()


def test_a_chroot_that_is_not_the_logins_is_refused(
    zk_chroot: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``prepare_chroot``: created with the digest ACL, prepared again with the same password,
    refused (in one line naming the password file) with another password or when someone
    created the chroot first; kazoo's debug line with the password never reaches a log."""
    from broker.config import ZkDigest
    from sluice.errors import LocalClusterError
    from sluice.local_cluster import prepare_chroot

    hosts, name = zk_chroot.split("/", 1)
    chroot = "/" + name
    mine = ZkDigest("sluice-hub", "first-secret-0f3a")
    theirs = ZkDigest("sluice-hub", "second-secret-9b2c")
    prepared: list[KazooClient] = []
    prepare_chroot(hosts, chroot, mine, prepared.append, tmp_path)
    prepare_chroot(hosts, chroot, mine, prepared.append, tmp_path)  # a restart
    assert len(prepared) == 2
    anonymous = KazooClient(hosts=hosts)
    anonymous.start(timeout=30)
    try:
        with pytest.raises(NoAuthError):
            anonymous.create(chroot + "/x")
        with pytest.raises(LocalClusterError) as replaced:
            prepare_chroot(hosts, chroot, theirs, prepared.append, tmp_path)
        assert len(prepared) == 2
        message = str(replaced.value)
        assert "\n" not in message and str(tmp_path / "hub-broker.password") in message
        assert "first-secret-0f3a" not in message and "second-secret-9b2c" not in message

        anonymous.ensure_path(chroot + "-open")  # someone was first, with an open ACL
        with pytest.raises(LocalClusterError):
            prepare_chroot(hosts, chroot + "-open", mine, prepared.append, tmp_path)
        assert len(prepared) == 2
    finally:
        _close(anonymous)

    from broker.cluster.zk_client import digest_auth

    caplog.set_level(logging.DEBUG, logger="kazoo.client")  # what a debugging user would do
    client = KazooClient(hosts=hosts + chroot, **digest_auth(mine))
    client.start(timeout=30)
    try:
        client.get_children("/")
    finally:
        _close(client)
    assert "Sending request" in caplog.text  # kazoo did log its requests
    assert "first-secret-0f3a" not in caplog.text and "second-secret-9b2c" not in caplog.text
