"""MirrorMaker 2's topic ACL sync (``sync.topic.acls.enabled``).

The rules on their own (which ACLs are copied, how they change), then between two real Sluice
brokers with an authorizer (``super.users=User:ANONYMOUS`` so the plaintext test clients and the
mirror may manage ACLs): the target gets the source's topic ACLs renamed through the replication
policy, without ALLOW WRITE, ALLOW ALL narrowed to READ, and an ACL added on the source later
arrives on the next interval. A target without an authorizer does not stop the mirror.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from connectors.mirror.acl_probe import kafka_python_settings
from connectors.mirror.acl_sync import mirrored_acls
from connectors.mirror.policy import DefaultReplicationPolicy
from connectors.mirror.topic_sync import TopicSelector
from hub.runtime.herder import Herder
from tests.connectors.mirror.conftest import Names, create_topic, mirror_config
from tests.fixtures.broker import BrokerProcess, wait_until

ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
LITERAL, PREFIXED = ResourcePatternType.LITERAL, ResourcePatternType.PREFIXED
TOPIC = ResourceType.TOPIC
Op = AclOperation
AUTHORIZER = (
    "--override", "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
    "--override", "super.users=User:ANONYMOUS",
)  # fmt: skip


def acl(
    name: str,
    who: str,
    op: AclOperation,
    perm: AclPermissionType = ALLOW,
    pattern: ResourcePatternType = LITERAL,
    rtype: ResourceType = TOPIC,
) -> AclBinding:
    return AclBinding(rtype, name, pattern, who, "*", op, perm)


def rows(bindings: list[AclBinding]) -> set[tuple[str, str, str, str, str]]:
    out = set()
    for binding in bindings:
        b: Any = binding
        out.add((b.name, b.resource_pattern_type.name, b.principal, b.operation.name,
                 b.permission_type.name))  # fmt: skip
    return out


# -- the rules ----------------------------------------------------------------------------------


def selector(topics: str = r"orders.*") -> TopicSelector:
    import re

    return TopicSelector(
        "A", "B", DefaultReplicationPolicy(), lambda t: re.fullmatch(topics, t) is not None, True
    )


def test_which_acls_are_copied_and_how() -> None:
    source = [
        acl("orders", "User:bob", Op.READ),
        acl("orders", "User:bob", Op.WRITE),  # only the mirror writes to A.orders
        acl("orders", "User:carol", Op.ALL),  # narrowed to READ ...
        acl("orders", "User:carol", Op.READ),  # ... and then the same as this one
        acl("orders", "User:eve", Op.WRITE, DENY),  # DENY is copied as it is
        acl("orders", "User:eve", Op.ALL, DENY),
        acl("orders", "User:dan", Op.DESCRIBE_CONFIGS),
        acl("orders", "User:bob", Op.READ, pattern=PREFIXED),  # cannot be renamed
        acl("*", "User:bob", Op.READ),  # the wildcard names no remote topic
        acl("payments", "User:bob", Op.READ),  # not replicated (topic filter)
        acl("B.orders", "User:bob", Op.READ),  # came from the target: a cycle
        acl("orders", "User:bob", Op.READ, rtype=ResourceType.GROUP),
    ]
    assert rows(mirrored_acls(source, selector(r"orders|payments-x|B\.orders"))) == {
        ("A.orders", "LITERAL", "User:bob", "READ", "ALLOW"),
        ("A.orders", "LITERAL", "User:carol", "READ", "ALLOW"),
        ("A.orders", "LITERAL", "User:eve", "WRITE", "DENY"),
        ("A.orders", "LITERAL", "User:eve", "ALL", "DENY"),
        ("A.orders", "LITERAL", "User:dan", "DESCRIBE_CONFIGS", "ALLOW"),
    }
    assert len(mirrored_acls(source, selector(r"orders"))) == 5  # no duplicates
    assert mirrored_acls([], selector()) == []


def test_the_acl_probe_takes_the_clients_security_settings() -> None:
    settings = {
        "bootstrap.servers": "h1:9093,h2:9093", "security.protocol": "sasl_ssl",
        "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "u", "sasl.password": "p",
        "ssl.ca.location": "/ca.pem", "ssl.endpoint.identification.algorithm": "none",
        "client.id": "x", "request.timeout.ms": "5",
    }  # fmt: skip
    assert kafka_python_settings(settings) == {
        "bootstrap_servers": ["h1:9093", "h2:9093"], "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512", "sasl_plain_username": "u",
        "sasl_plain_password": "p", "ssl_cafile": "/ca.pem", "ssl_check_hostname": False,
    }  # fmt: skip
    # What it cannot pass on makes the probe say "unknown" rather than guess.
    assert kafka_python_settings({**settings, "sasl.mechanism": "OAUTHBEARER"}) is None
    assert kafka_python_settings({**settings, "ssl.ca.pem": "-----BEGIN"}) is None


# -- two real brokers ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def secured_a(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    broker = BrokerProcess(tmp_path_factory.mktemp("secured-a") / "data", *AUTHORIZER)
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(scope="module")
def secured_b(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    broker = BrokerProcess(tmp_path_factory.mktemp("secured-b") / "data", *AUTHORIZER)
    broker.start()
    yield broker
    broker.stop()


def create_acls(cluster: BrokerProcess, bindings: list[AclBinding]) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    for future in admin.create_acls(bindings).values():
        future.result(15)


def topic_acls(cluster: BrokerProcess, prefix: str) -> set[tuple[str, str, str, str, str]]:
    """The cluster's TOPIC ACLs on topics whose name starts with ``prefix``."""
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    make: Any = AclBindingFilter
    selector = make(TOPIC, None, ResourcePatternType.ANY, None, None, Op.ANY, AclPermissionType.ANY)
    found = admin.describe_acls(selector).result(15)
    return {r for r in rows(found) if r[0].startswith(prefix)}


def test_topic_acls_arrive_renamed_and_follow_the_source(
    secured_a: BrokerProcess,
    secured_b: BrokerProcess,
    herder_on: Callable[..., Herder],
    names: Names,
) -> None:
    topic, later = f"{names.prefix}.orders", f"{names.prefix}.payments"
    create_topic(secured_a, topic, 1)
    create_acls(secured_a, [
        acl(topic, "User:bob", Op.READ),
        acl(topic, "User:bob", Op.WRITE),
        acl(topic, "User:carol", Op.ALL),
        acl(topic, "User:eve", Op.READ, DENY),
        acl(names.prefix, "User:bob", Op.READ, pattern=PREFIXED),
        acl(f"other-{names.prefix}", "User:bob", Op.READ),  # not mirrored (topic filter)
    ])  # fmt: skip
    herder = herder_on(secured_b, f"state-{names.prefix}")
    config = mirror_config(names, secured_a, secured_b, **{"sync.topic.acls.interval.seconds": 1})
    herder.create_connector("source", config)

    remote = names.remote(topic)
    expected = {
        (remote, "LITERAL", "User:bob", "READ", "ALLOW"),
        (remote, "LITERAL", "User:carol", "READ", "ALLOW"),
        (remote, "LITERAL", "User:eve", "READ", "DENY"),
    }
    wait_until(lambda: topic_acls(secured_b, names.source) == expected, 30, "mirrored ACLs")
    assert topic_acls(secured_b, f"other-{names.prefix}") == set()

    # An ACL added on the source later (on a topic that does not exist yet: ACLs need none)
    # arrives on a following run, without a restart.
    create_acls(secured_a, [acl(later, "User:dan", Op.DESCRIBE)])
    expected.add((names.remote(later), "LITERAL", "User:dan", "DESCRIBE", "ALLOW"))
    wait_until(lambda: topic_acls(secured_b, names.source) == expected, 30, "the later ACL")
    status = herder.connector_status("source")
    assert status["connector"]["state"] == "RUNNING", status


def test_a_target_without_an_authorizer_does_not_stop_the_mirror(
    secured_a: BrokerProcess,
    cluster_b: BrokerProcess,
    herder_on: Callable[..., Herder],
    names: Names,
    caplog: pytest.LogCaptureFixture,
) -> None:
    topic = f"{names.prefix}.orders"
    create_topic(secured_a, topic, 1)
    create_acls(secured_a, [acl(topic, "User:bob", Op.READ)])
    caplog.set_level(logging.INFO, logger="connectors.mirror.source_connector")
    herder = herder_on(cluster_b, f"state-{names.prefix}")
    config = mirror_config(names, secured_a, cluster_b, **{"sync.topic.acls.interval.seconds": 1})
    herder.create_connector("source", config)

    def refused() -> list[logging.LogRecord]:
        return [r for r in caplog.records if "no authorizer" in r.getMessage()]

    wait_until(refused, 30, "the connector to log that the target has no authorizer")
    assert all(r.levelno == logging.INFO for r in refused())
    status = herder.connector_status("source")
    assert status["connector"]["state"] == "RUNNING", status
    admin = AdminClient({"bootstrap.servers": cluster_b.bootstrap})
    assert names.remote(topic) in admin.list_topics(timeout=15).topics


@pytest.fixture
def guarded_a(tmp_path: Any) -> Iterator[BrokerProcess]:
    """A source whose ACLs the mirror may not list: DESCRIBE on the cluster is denied to
    User:ANONYMOUS (who may still create topics and produce)."""
    broker = BrokerProcess(
        tmp_path / "data",
        "--override", "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
        "--override", "allow.everyone.if.no.acl.found=true",
    )  # fmt: skip
    broker.start()
    cluster, me = ResourceType.BROKER, "User:ANONYMOUS"  # BROKER: confluent-kafka's CLUSTER
    create_acls(broker, [
        acl("kafka-cluster", me, Op.ALTER, rtype=cluster),
        acl("kafka-cluster", me, Op.CREATE, rtype=cluster),
        acl("kafka-cluster", me, Op.IDEMPOTENT_WRITE, rtype=cluster),
    ])  # fmt: skip
    create_acls(broker, [acl("kafka-cluster", me, Op.DESCRIBE, DENY, rtype=cluster)])
    yield broker
    broker.stop()


def test_a_source_whose_acls_cannot_be_listed_does_not_stop_the_mirror(
    guarded_a: BrokerProcess,
    cluster_b: BrokerProcess,
    herder_on: Callable[..., Herder],
    names: Names,
    caplog: pytest.LogCaptureFixture,
) -> None:
    topic = f"{names.prefix}.orders"
    create_topic(guarded_a, topic, 1)
    caplog.set_level(logging.INFO, logger="connectors.mirror.source_connector")
    herder = herder_on(cluster_b, f"state-{names.prefix}")
    config = mirror_config(names, guarded_a, cluster_b, **{"sync.topic.acls.interval.seconds": 1})
    herder.create_connector("source", config)

    def warned() -> list[logging.LogRecord]:
        return [r for r in caplog.records if "not allowed to list" in r.getMessage()]

    wait_until(warned, 30, "the connector to warn that it may not list the source's ACLs")
    assert all(r.levelno == logging.WARNING for r in warned())
    status = herder.connector_status("source")
    assert status["connector"]["state"] == "RUNNING", status
    admin = AdminClient({"bootstrap.servers": cluster_b.bootstrap})
    assert names.remote(topic) in admin.list_topics(timeout=15).topics


def test_a_source_without_an_authorizer_is_said_once(
    cluster_a: BrokerProcess,
    cluster_b: BrokerProcess,
    herder_on: Callable[..., Herder],
    names: Names,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The default (sync on) between clusters without ACLs: one INFO line, a running mirror."""
    topic = f"{names.prefix}.orders"
    create_topic(cluster_a, topic, 1)
    caplog.set_level(logging.DEBUG, logger="connectors.mirror.source_connector")
    herder = herder_on(cluster_b, f"state-{names.prefix}")
    config = mirror_config(names, cluster_a, cluster_b, **{"sync.topic.acls.interval.seconds": 1})
    herder.create_connector("source", config)

    def runs() -> list[logging.LogRecord]:
        return [r for r in caplog.records if r.getMessage() == "no topic ACLs to sync"]

    wait_until(lambda: len(runs()) >= 2, 30, "two ACL sync runs")
    said = [r for r in caplog.records if "source cluster has no authorizer" in r.getMessage()]
    assert [r.levelno for r in said] == [logging.INFO]
    assert all(getattr(r, "source", None) == "disabled" for r in runs())
    status = herder.connector_status("source")
    assert status["connector"]["state"] == "RUNNING", status
