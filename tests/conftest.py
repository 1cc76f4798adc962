"""Shared test configuration: service fixtures live in ``tests/fixtures/`` and load here."""

pytest_plugins = [
    "tests.fixtures.broker",
    "tests.fixtures.hub",
    "tests.fixtures.postgres",
    "tests.fixtures.s3",
    "tests.fixtures.webhdfs",
    "tests.fixtures.spark",
    "tests.fixtures.browser",
]
