"""Shared test configuration: service fixtures live in ``tests/fixtures/`` and load here."""

import os

import pytest

# Plugins installed in the environment (the ``sluice`` entry-point group) must not change what
# the suite sees; this also reaches the brokers and hubs the fixtures start as subprocesses.
os.environ.setdefault("SLUICE_DISABLE_ENTRYPOINTS", "1")

pytest_plugins = [
    "tests.fixtures.broker",
    "tests.fixtures.hub",
    "tests.fixtures.postgres",
    "tests.fixtures.s3",
    "tests.fixtures.webhdfs",
    "tests.fixtures.spark",
    "tests.fixtures.browser",
    "tests.fixtures.file_roots",
    "tests.fixtures.zookeeper",
    "tests.fixtures.schema_registry",
    "tests.fixtures.wire_recorder",
    "tests.fixtures.tls",
    "tests.fixtures.secure_broker",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test has its own node id. pytest-xdist sends tests to its workers by node id, so
    tests sharing one would silently run once: schemathesis names each API operation's test
    ``name[operation]`` but leaves them all the function's node id, which is fixed here; any
    other clash fails the run."""
    for item in items:
        label = getattr(item, "operation_label", None)  # schemathesis' SchemathesisFunction
        if label and not item.nodeid.endswith("]") and item.parent is not None:
            # schemathesis sets the pre-9 ``_nodeid``; pytest 9 reads ``_id`` (the uniqueness
            # check below fails loudly should that change again)
            item._id = item.parent.id.child(item.name)  # type: ignore[attr-defined]
    seen: set[str] = set()
    clashes = sorted(
        {item.nodeid for item in items if item.nodeid in seen or seen.add(item.nodeid)}
    )
    if clashes:
        raise pytest.UsageError(f"tests sharing a node id would run once: {clashes[:5]}")
