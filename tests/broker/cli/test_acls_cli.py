"""``sluice acls`` (authorizer on, as kafka-acls.sh is used) and ``sluice quotas`` (as
kafka-configs.sh is) against real brokers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.broker.cli.test_cli import sluice
from tests.fixtures.broker import BrokerProcess


@pytest.fixture
def acl_broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    proc = BrokerProcess(
        tmp_path / "data",
        "--override", "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
        "--override", "super.users=User:ANONYMOUS",
    )  # fmt: skip
    proc.start()
    yield proc
    proc.stop()


def test_add_list_remove(acl_broker: BrokerProcess) -> None:
    b = ("--bootstrap", acl_broker.bootstrap)
    added = sluice("acls", "add", "--allow-principal", "User:alice", "--consumer",
                   "--topic", "orders", "--group", "billing", *b).stdout  # fmt: skip
    assert "added 3 ACL(s)" in added
    sluice("acls", "add", "--deny-principal", "User:bob", "--operation", "Write",
           "--topic", "pay-", "--resource-pattern-type", "prefixed", *b)  # fmt: skip
    listed = sluice("acls", "list", *b).stdout
    assert "Topic:orders" in listed and "Group:billing" in listed and "Topic:pay-" in listed
    assert "User:alice" in listed and "READ" in listed and "DENY" in listed
    only = sluice("acls", "list", "--topic", "pay-eu", "--resource-pattern-type", "match",
                  *b).stdout  # fmt: skip
    assert "Topic:pay-" in only and "orders" not in only
    removed = sluice("acls", "remove", "--allow-principal", "User:alice", "--topic", "orders",
                     *b).stdout  # fmt: skip
    assert "removed 2 ACL(s)" in removed
    listed = sluice("acls", "list", *b).stdout
    assert "Topic:orders" not in listed and "Group:billing" in listed
    bad = sluice("acls", "add", "--allow-principal", "User:x", "--operation", "Fly",
                 "--topic", "t", *b, check=False)  # fmt: skip
    assert bad.returncode != 0 and "unknown operation" in bad.stderr


def test_quotas_alter_describe(fresh_broker: BrokerProcess) -> None:
    b = ("--bootstrap", fresh_broker.bootstrap)
    user = f"cli-{id(b)}"
    sluice("quotas", "alter", "--user", user, "--client-id", "app",
           "--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152", *b)  # fmt: skip
    sluice("quotas", "alter", "--default-client-id", "--add-config", "request_percentage=50", *b)
    listed = sluice("quotas", "describe", "--user", user, *b).stdout
    assert user in listed and "producer_byte_rate" in listed and "1048576" in listed
    assert "request_percentage" not in listed  # another entity
    everything = sluice("quotas", "describe", *b).stdout
    assert "<default>" in everything and "request_percentage" in everything
    sluice("quotas", "alter", "--user", user, "--client-id", "app",
           "--delete-config", "producer_byte_rate", *b)  # fmt: skip
    listed = sluice("quotas", "describe", "--user", user, *b).stdout
    assert "producer_byte_rate" not in listed and "consumer_byte_rate" in listed
    bad = sluice("quotas", "alter", "--user", user, "--add-config", "bogus=1", *b, check=False)
    assert bad.returncode != 0 and "unknown quota" in bad.stderr
    sluice("quotas", "alter", "--default-client-id", "--delete-config", "request_percentage", *b)
