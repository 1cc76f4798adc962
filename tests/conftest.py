"""Shared test configuration: service fixtures live in ``tests/fixtures/`` and load here."""

import os

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
]
