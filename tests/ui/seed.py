"""Realistic data for the console's browser tests and screenshots: thousands of messages, a
consumer group with lag (partitions without a commit included), a file source with committed
offsets, a failed connector.

Used by ``tests/ui/test_console_pages.py`` (module fixture over the session's hub) and runnable
against any hub to take screenshots by hand::

    python -m tests.ui.seed --rest-url http://127.0.0.1:8083 --token-file data/hub.token \\
        --bootstrap 127.0.0.1:9092 --files-dir ./files

``--files-dir`` must lie under the hub's ``file.allowed.paths`` (the file source tails a file
written there).
"""

from __future__ import annotations

import argparse
import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition

ORDERS = "orders"
ORDERS_PARTITIONS = 3
ORDERS_COUNT = 12_000
CUSTOMERS = 400  # 30 orders each
TOMBSTONES = 5
GROUP = "billing"
SOURCE = "access-log-source"
FAILED = "warehouse-sink"
LOG_LINES = 250


@dataclass
class Seeded:
    orders: str
    group: str
    source: str
    failed: str
    log_topic: str
    committed: dict[int, int]


def request(rest_url: str, token: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(rest_url + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw, status = resp.read(), resp.status
    except urllib.error.HTTPError as exc:
        raw, status = exc.read(), exc.code
    return status, json.loads(raw) if raw else None


def _order(i: int) -> tuple[str, bytes | None, list[tuple[str, bytes]]]:
    customer = f"cust-{i % CUSTOMERS:04d}"
    order = {
        "order_id": f"o-{i:06d}",
        "customer": {"id": customer, "tier": ("gold", "silver", "bronze")[i % 3]},
        "items": [{"sku": f"sku-{(i * 7) % 50:03d}", "qty": 1 + i % 4}],
        "amount": round(5 + (i * 37) % 500 + 0.99, 2),
        "status": ("created", "paid", "shipped")[i % 3],
    }
    value: Any = order
    if i % 25 == 0:  # written by a Connect JsonConverter with schemas.enable=true
        schema = {"type": "struct", "name": "shop.Order", "optional": False, "fields": []}
        value = {"schema": schema, "payload": order}
    headers = [("source", b"web" if i % 2 else b"mobile"), ("trace-id", f"t-{i:08x}".encode())]
    return customer, json.dumps(value).encode(), headers


def produce_orders(bootstrap: str, topic: str = ORDERS) -> None:
    """12,000 orders over six hours up to now, keyed by customer; the last few customers'
    keys are deleted with tombstones at the end."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "acks": "all"})
    now = int(time.time() * 1000)
    span = 6 * 3600 * 1000
    for i in range(ORDERS_COUNT):
        key, value, headers = _order(i)
        ts = now - span + (span * i) // ORDERS_COUNT
        producer.produce(topic, key=key, value=value, headers=headers, timestamp=ts)
        if i % 2000 == 0:
            producer.poll(0)
    for j in range(TOMBSTONES):
        producer.produce(topic, key=f"cust-{CUSTOMERS - 1 - j:04d}", value=None)
    assert producer.flush(60) == 0, "orders not acknowledged"


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "seed-watermarks"})
    try:
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in range(partitions)
        }
    finally:
        consumer.close()


def commit_group(bootstrap: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    """Commits without joining (assign, not subscribe): the group stays Empty, resettable."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    consumer.commit(
        offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False
    )
    consumer.close()


def seed(rest_url: str, token: str, bootstrap: str, files_dir: Path) -> Seeded:
    """Creates the topics, messages, group and connectors (idempotent for the topic only)."""
    status, body = request(
        rest_url, token, "POST", "/console/api/topics",
        {"name": ORDERS, "partitions": ORDERS_PARTITIONS, "configs": {"retention.ms": "604800000"}},
    )  # fmt: skip
    assert status in (201, 409), body
    if status == 201:
        produce_orders(bootstrap)
    # billing read 80% of partition 0, 70% of partition 1 and never reached partition 2
    ends = end_offsets(bootstrap, ORDERS, ORDERS_PARTITIONS)
    committed = {0: ends[0] * 8 // 10, 1: ends[1] * 7 // 10}
    commit_group(bootstrap, GROUP, ORDERS, committed)

    files_dir.mkdir(parents=True, exist_ok=True)
    access_log = files_dir / "access.log"
    lines = [
        json.dumps({"time": f"2026-11-25T10:{i // 60 % 60:02d}:{i % 60:02d}Z", "level":
                    ("INFO", "WARN", "ERROR")[i % 7 % 3], "service": ("api", "web")[i % 2],
                    "path": f"/orders/{i}", "status": (200, 201, 404, 500)[i % 4]})
        for i in range(LOG_LINES)
    ]  # fmt: skip
    access_log.write_text("\n".join(lines) + "\n")
    log_topic = "access-logs"
    status, body = request(rest_url, token, "PUT", f"/connectors/{SOURCE}/config", {
        "connector.class": "file-source", "file": str(access_log), "topic": log_topic,
    })  # fmt: skip
    assert status in (200, 201), body
    status, body = request(rest_url, token, "PUT", f"/connectors/{FAILED}/config", {
        "connector.class": "file-sink", "topics": ORDERS,
        "file": str(files_dir / "no-such-dir" / "orders.txt"),
    })  # fmt: skip
    assert status in (200, 201), body
    return Seeded(ORDERS, GROUP, SOURCE, FAILED, log_topic, committed)


def wait_for(check: Any, what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rest-url", required=True)
    parser.add_argument("--token-file", type=Path, required=True)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--files-dir", type=Path, required=True)
    args = parser.parse_args()
    done = seed(args.rest_url, args.token_file.read_text().strip(), args.bootstrap, args.files_dir)
    print(f"seeded {done}")


if __name__ == "__main__":
    main()
