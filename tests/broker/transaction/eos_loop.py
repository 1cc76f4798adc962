"""A consume-transform-produce loop, exactly once (the test kills it with SIGKILL).

``python -m tests.broker.transaction.eos_loop BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID [HOLD]``

Reads INPUT (read_committed, no auto commit) in group GROUP, writes each record's value,
upper-cased, to OUTPUT and commits the consumed positions with ``send_offsets_to_transaction``
in the same transaction, one transaction per ``consume`` batch. Prints ``committed N`` (the
running total) after each commit so the test can tell it made progress.

With HOLD > 0, once HOLD records are committed the loop writes the next batch, flushes it to the
broker and then waits forever inside that open transaction, printing ``holding``: the test's
kill then lands mid-transaction every time, instead of whenever the machine's timing puts it.
"""

from __future__ import annotations

import sys
import threading

from confluent_kafka import Consumer, KafkaException, Producer


def main(bootstrap: str, source: str, sink: str, group: str, txn_id: str, hold: int = 0) -> None:
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "isolation.level": "read_committed",
        "enable.auto.commit": False, "auto.offset.reset": "earliest",
        "session.timeout.ms": 3000, "log_level": 0,
    })  # fmt: skip
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id,
                         "linger.ms": 5, "log_level": 0})  # fmt: skip
    producer.init_transactions(30)
    consumer.subscribe([source])
    total = 0
    while True:
        batch = [m for m in consumer.consume(50, 0.5) if m.error() is None]
        if not batch:
            continue
        producer.begin_transaction()
        for msg in batch:
            producer.produce(sink, (msg.value() or b"").upper(), key=msg.key())
        if 0 < hold <= total:
            producer.flush(30)
            print("holding", flush=True)
            threading.Event().wait()  # until the test's SIGKILL
        try:
            producer.send_offsets_to_transaction(
                consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), 30
            )
            producer.commit_transaction(30)
        except KafkaException as exc:
            if exc.args[0].txn_requires_abort():
                producer.abort_transaction(30)
                consumer.close()  # rejoin from the committed offsets
                return main(bootstrap, source, sink, group, txn_id, hold)
            raise
        total += len(batch)
        print(f"committed {total}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:6], *(int(a) for a in sys.argv[6:7]))
