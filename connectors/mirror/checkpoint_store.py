"""The checkpoints already on the target: the latest per group and remote partition.

Kafka's ``CheckpointStore``: read once, to the end, when a checkpoint task starts, so the task
emits only checkpoints that move forward (or follow an upstream rewind) and so the group offset
sync has the last translations after a restart. A read that fails (the topic is missing on a
first start, or not readable) leaves the store empty and reports it, and the offset sync store
then loads conservatively (``OffsetSyncStore.read_to_end_first``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

from connectors.mirror.errors import WireError
from connectors.mirror.wire import Checkpoint

log = logging.getLogger(__name__)

Checkpoints = dict[str, dict[tuple[str, int], Checkpoint]]


def read_checkpoints(
    settings: Mapping[str, str],
    topic: str,
    groups: Iterable[str],
    timeout: float,
    log_extra: dict[str, Any],
) -> tuple[Checkpoints, bool]:
    """(checkpoints of ``groups``, whether the whole topic was read)."""
    wanted = set(groups)
    out: Checkpoints = {}
    try:
        consumer = Consumer(dict(settings))
    except KafkaException as exc:
        log.warning("checkpoints not loaded", extra={**log_extra, "error": str(exc)})
        return out, False
    try:
        partition = TopicPartition(topic, 0)
        _, end = consumer.get_watermark_offsets(partition, timeout=timeout)
        if end <= 0:
            return out, True
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + timeout
        position = 0
        while position < end:
            if time.monotonic() > deadline:
                raise TimeoutError(f"read {position} of {end} records")
            for message in consumer.consume(1000, 0.2):
                if message.error() is not None:
                    continue
                position = (message.offset() or 0) + 1
                try:
                    cp = Checkpoint.decode(message.key() or b"", message.value() or b"")
                except WireError as exc:
                    log.warning("ignored a malformed checkpoint",
                                extra={**log_extra, "offset": message.offset(),
                                       "error": str(exc)})  # fmt: skip
                    continue
                if cp.group in wanted:
                    out.setdefault(cp.group, {})[(cp.topic, cp.partition)] = cp
            position = max(position, consumer.position([partition])[0].offset)
        return out, True
    except (KafkaException, TimeoutError) as exc:
        log.warning(
            "checkpoints not loaded; translating only what is mirrored from now on",
            extra={**log_extra, "topic": topic, "error": str(exc)},
        )
        return {}, False
    finally:
        consumer.close()
