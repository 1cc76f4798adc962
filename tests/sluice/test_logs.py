"""librdkafka's lines through ``sluice.logs``: demoted below ERROR, a repeat once a minute."""

from __future__ import annotations

import logging

import pytest

from sluice.logs import LIBRDKAFKA_LOGGER, librdkafka_logger


def test_librdkafka_lines_are_demoted_and_throttled(caplog: pytest.LogCaptureFixture) -> None:
    logger = librdkafka_logger()
    assert librdkafka_logger() is logger and len(logger.filters) == 1  # installed once
    caplog.set_level(logging.DEBUG, logger=LIBRDKAFKA_LOGGER)
    refused = "FAIL [rdkafka#producer-{}] 127.0.0.1:{}/bootstrap: Connect failed: refused"
    for i in range(50):  # a reconnect loop: ids and ports differ, the message does not
        logger.error(refused.format(i, 40000 + i))
    logger.info("REQTMOUT [rdkafka#consumer-1] timed out")
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", refused.format(0, 40000)),
        ("DEBUG", "REQTMOUT [rdkafka#consumer-1] timed out"),
    ]


def test_notices_are_dropped_at_info(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LIBRDKAFKA_LOGGER)
    librdkafka_logger().info("Disconnected: connection closed by peer (a notice)")
    assert caplog.records == []
