"""The broker under a low open-files limit (``ulimit -n 256``) with 1,000 partitions.

One descriptor per segment would need 1,000 before a client connects; the bounded segment
file cache keeps the broker within its limit and serving every partition. The broker runs in
a subprocess whose soft *and* hard limit are 256, so it cannot raise them.
"""

from __future__ import annotations

import resource
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.fixtures.broker import BrokerProcess, api_versions_ok, wait_until

LIMIT = 256
PARTITIONS = 1_000
TIMEOUT = 60.0


def _limit_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))


class LimitedBroker(BrokerProcess):
    preexec_fn = staticmethod(_limit_descriptors)


@pytest.fixture(scope="module")
def limited_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LimitedBroker]:
    proc = LimitedBroker(tmp_path_factory.mktemp("limited") / "data")
    proc.start()
    yield proc
    assert proc.stop() == 0, proc.log()[-4000:]
    text = proc.log()
    assert "handler failed" not in text, text[-4000:]


def _open_fds(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


def test_a_thousand_partitions_serve_produce_and_fetch(limited_broker: LimitedBroker) -> None:
    assert limited_broker.proc is not None
    pid = limited_broker.proc.pid
    assert f"soft={LIMIT}" in limited_broker.log()  # the limit it logged at start
    admin = AdminClient({"bootstrap.servers": limited_broker.bootstrap})
    futures = admin.create_topics([NewTopic("wide", PARTITIONS, 1)])
    futures["wide"].result(TIMEOUT)
    assert _open_fds(pid) < LIMIT

    producer = Producer(
        {"bootstrap.servers": limited_broker.bootstrap, "acks": "all", "linger.ms": 20}
    )
    errors: list[object] = []
    for p in range(PARTITIONS):
        producer.produce(
            "wide",
            value=b"value-%d" % p,
            partition=p,
            on_delivery=lambda err, _m: errors.append(err) if err else None,
        )
        producer.poll(0)
    assert producer.flush(TIMEOUT) == 0
    assert errors == []

    consumer = Consumer(
        {
            "bootstrap.servers": limited_broker.bootstrap,
            "group.id": "unused",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition("wide", p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    seen: dict[int, bytes] = {}
    deadline = time.monotonic() + TIMEOUT
    while len(seen) < PARTITIONS and time.monotonic() < deadline:
        for msg in consumer.consume(1000, timeout=1.0):
            assert msg.error() is None, msg.error()
            seen[msg.partition()] = msg.value()
    consumer.close()
    assert len(seen) == PARTITIONS
    assert all(seen[p] == b"value-%d" % p for p in range(PARTITIONS))
    assert _open_fds(pid) < LIMIT


def test_running_out_of_descriptors_on_accept_does_not_stop_the_listener(
    limited_broker: LimitedBroker,
) -> None:
    """More connections than descriptors: the excess waits or fails; once they go, the
    broker accepts and serves again."""
    socks = []
    try:
        for _ in range(LIMIT + 50):
            socks.append(socket.create_connection((limited_broker.host, limited_broker.port), 5))
    except OSError:
        pass  # the backlog may fill first; either way the broker is out of descriptors
    finally:
        for s in socks:
            s.close()
    wait_until(
        lambda: api_versions_ok(limited_broker.host, limited_broker.port),
        TIMEOUT,
        "the broker to accept connections again",
    )


def _low_soft_limit() -> None:
    """A common default: a soft limit of 256 under a higher hard limit."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, hard))


class LowSoftLimitBroker(BrokerProcess):
    preexec_fn = staticmethod(_low_soft_limit)


def test_the_broker_raises_its_soft_limit_to_the_hard_limit(tmp_path: Path) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY:
        assert hard > LIMIT, "this machine's hard limit leaves nothing to raise"
    proc = LowSoftLimitBroker(tmp_path / "data")
    proc.start()
    try:
        assert proc.proc is not None
        limits = Path(f"/proc/{proc.proc.pid}/limits").read_text()
        [line] = [ln for ln in limits.splitlines() if ln.startswith("Max open files")]
        soft_now, hard_now = line.split()[3:5]
        # an unlimited hard limit: raised as far as the kernel allows a process (nr_open)
        expected = hard_now if hard_now != "unlimited" else Path("/proc/sys/fs/nr_open").read_text()
        assert soft_now == expected.strip() and soft_now != str(LIMIT), line
    finally:
        assert proc.stop() == 0, proc.log()[-4000:]
