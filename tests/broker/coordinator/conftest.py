"""Fixtures for coordinator tests; the fakes themselves are in ``coordinator_fakes.py``."""

from __future__ import annotations

import pytest

from broker.coordinator.group_manager import GroupManager
from broker.coordinator.rebalance import GroupConfig
from tests.broker.coordinator.coordinator_fakes import FakeClock, RecordingStore


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store() -> RecordingStore:
    return RecordingStore()


@pytest.fixture
def manager(clock: FakeClock, store: RecordingStore) -> GroupManager:
    config = GroupConfig(
        min_session_timeout_ms=100, max_session_timeout_ms=60_000, initial_rebalance_delay_ms=0
    )
    return GroupManager(config, store, clock)  # type: ignore[arg-type]
