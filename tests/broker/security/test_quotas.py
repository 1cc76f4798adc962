"""Client quota configs and the rate/throttle arithmetic (``broker/security/quota*.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.security import quota_manager
from broker.security.quota import (
    CONSUMER_BYTE_RATE,
    DEFAULT,
    PRODUCER_BYTE_RATE,
    ClientQuotas,
    QuotaError,
    entity,
    matches,
)
from broker.security.quota_manager import QuotaManager


def test_kafka_precedence() -> None:
    q = ClientQuotas()
    levels = [
        (entity(client_id=DEFAULT), 8.0),
        (entity(client_id="app"), 7.0),
        (entity(user=DEFAULT), 6.0),
        (entity(user=DEFAULT, client_id=DEFAULT), 5.0),
        (entity(user=DEFAULT, client_id="app"), 4.0),
        (entity(user="bob"), 3.0),
        (entity(user="bob", client_id=DEFAULT), 2.0),
        (entity(user="bob", client_id="app"), 1.0),
    ]
    for target, value in levels:  # add from weakest to strongest; each must take over
        q.alter(target, [(PRODUCER_BYTE_RATE, value, False)])
        assert q.limit(PRODUCER_BYTE_RATE, "bob", "app") == value
    assert q.limit(PRODUCER_BYTE_RATE, "alice", "other") == 5.0  # default user + default client
    assert q.limit(CONSUMER_BYTE_RATE, "bob", "app") is None
    q.alter(entity(user="bob", client_id="app"), [(PRODUCER_BYTE_RATE, 0, True)])
    assert q.limit(PRODUCER_BYTE_RATE, "bob", "app") == 2.0


def test_alter_validates_and_persists(tmp_path: Path) -> None:
    path = tmp_path / "quotas.json"
    q = ClientQuotas(path)
    with pytest.raises(QuotaError, match="unknown quota"):
        q.alter(entity(user="bob"), [("bytes_per_fortnight", 1.0, False)])
    with pytest.raises(QuotaError, match="positive"):
        q.alter(entity(user="bob"), [(PRODUCER_BYTE_RATE, -1.0, False)])
    with pytest.raises(QuotaError, match="user, a client-id"):
        q.alter((("ip", "1.2.3.4"),), [(PRODUCER_BYTE_RATE, 1.0, False)])
    q.alter(entity(user=DEFAULT, client_id="app"), [(CONSUMER_BYTE_RATE, 5e6, False)])
    again = ClientQuotas(path)
    assert again.entries() == [(entity(user=DEFAULT, client_id="app"), {CONSUMER_BYTE_RATE: 5e6})]


def test_describe_filters() -> None:
    bob_app = entity(user="bob", client_id="app")
    default_user = entity(user=DEFAULT)
    assert matches(bob_app, {"user": (0, "bob")}, strict=False)
    assert not matches(bob_app, {"user": (0, "bob")}, strict=True)
    assert matches(default_user, {"user": (1, None)}, strict=True)
    assert not matches(default_user, {"user": (2, None)}, strict=False)
    assert matches(bob_app, {"user": (2, None), "client-id": (0, "app")}, strict=True)


def test_throttle_brings_the_average_back_to_the_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(quota_manager.time, "monotonic", lambda: clock[0])
    quotas = ClientQuotas()
    quotas.alter(entity(client_id="app"), [(PRODUCER_BYTE_RATE, 1000.0, False)])
    manager = QuotaManager(quotas, window_num=3, window_size_s=1.0)
    assert manager.produce("u", "app", 1000) == 0  # 1000 B over the minimum 2 s span: 500 B/s
    throttle = manager.produce("u", "app", 3000)  # 4000 B over 2 s = 2000 B/s, twice the quota
    assert throttle == 2000  # (2000 - 1000) / 1000 * 2 s
    assert manager.produce("u", "other", 10**9) == 0  # no quota for that client id


def test_a_greedy_client_averages_its_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client sending as fast as it is let (1 ms per request, then the throttle) for 60
    simulated seconds averages the quota within 10%."""
    clock = [0.0]
    monkeypatch.setattr(quota_manager.time, "monotonic", lambda: clock[0])
    quotas = ClientQuotas()
    quotas.alter(entity(user="u"), [(PRODUCER_BYTE_RATE, 1_000_000.0, False)])
    manager = QuotaManager(quotas, window_num=11, window_size_s=1.0)
    sent = 0
    while clock[0] < 60:
        sent += 64_000
        clock[0] += 0.001 + manager.produce("u", "app", 64_000) / 1000
    assert 0.9e6 < sent / clock[0] < 1.1e6
