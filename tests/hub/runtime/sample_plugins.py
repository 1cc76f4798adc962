"""Test connectors and minimal converters, and a registry holding them.

``SampleRegistry`` answers the registry methods the runtime uses (``connectors()``,
``converters()``...). It is a local stand-in so these tests do not depend on the converters
package; the stand-in JSON and string converters are registered under Kafka Connect's class
names so the worker's default converter settings resolve.

Cross-task state (records a sink received, how often a task failed) lives in ``STATE``, keyed
by connector name, because the worker creates a new task object on every (re)start.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from hub.api import (
    ConfigModel,
    Converter,
    DataError,
    SchemaAndValue,
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
    TopicPartition,
)
from hub.api.schema import Schema


class State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.received: dict[str, list[SinkRecord]] = defaultdict(list)
        self.starts: dict[str, int] = defaultdict(int)
        self.opened: dict[str, list[TopicPartition]] = defaultdict(list)


STATE = State()


class JsonConverter(Converter):
    name = "json"
    aliases = ("org.apache.kafka.connect.json.JsonConverter",)

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is None:
            return None
        try:
            return json.dumps(value).encode()
        except (TypeError, ValueError) as exc:
            raise DataError(f"cannot serialise {type(value).__name__}") from exc

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(None, None)
        try:
            return SchemaAndValue(None, json.loads(data))
        except ValueError as exc:
            raise DataError(f"not JSON: {exc}") from exc


class StringConverter(Converter):
    name = "string"
    aliases = ("org.apache.kafka.connect.storage.StringConverter",)

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        return None if value is None else str(value).encode()

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        return SchemaAndValue(None, None if data is None else data.decode())


class CounterConfig(ConfigModel):
    topic: str
    count: int = 100
    batch: int = 10
    partitions: int = 1
    fail_times: int = 0  # the first N task starts raise from poll
    poll_delay_ms: int = 0


class CounterTask(SourceTask):
    """Emits ``1..count`` per source partition ``p``, value ``{"p": p, "n": n}``, in order."""

    def start(self, config: Mapping[str, Any]) -> None:
        self.config = CounterConfig.parse(config)
        self.name = config["connector"]
        self.stopping = threading.Event()
        self.next = {}
        for p in range(self.config.partitions):
            last = self.context.offset_reader.offset({"p": p})
            self.next[p] = int(last["n"]) + 1 if last else 1
        with STATE.lock:
            STATE.starts[self.name] += 1
            self.fail = STATE.starts[self.name] <= self.config.fail_times

    def poll(self) -> list[SourceRecord] | None:
        if self.fail:
            raise RuntimeError("counter task failing on purpose")
        if self.config.poll_delay_ms:
            self.stopping.wait(self.config.poll_delay_ms / 1000)
        out = []
        for p, n in self.next.items():
            upto = min(n + self.config.batch, self.config.count + 1)
            out += [
                SourceRecord(
                    topic=self.config.topic,
                    key=f"p{p}",
                    value={"p": p, "n": i},
                    source_partition={"p": p},
                    source_offset={"n": i},
                )
                for i in range(n, upto)
            ]
            self.next[p] = upto
        if not out:
            self.stopping.wait(0.02)
        return out

    def stop(self) -> None:
        self.stopping.set()


class CounterSource(SourceConnector):
    name = "counter"
    aliases = ("org.example.CounterSource",)
    config_model = CounterConfig

    def start(self, config: Any) -> None:
        self.raw = config.raw()

    @classmethod
    def task_class(cls) -> type[Any]:
        return CounterTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [{**self.raw, "connector": self.raw["name"]}]


class PoisonSourceTask(CounterTask):
    """Every 3rd record carries a value no converter can serialise (a set)."""

    def poll(self) -> list[SourceRecord] | None:
        records = super().poll() or []
        return [
            r.replace(value={"bad": {1, 2}}) if r.source_offset["n"] % 3 == 0 else r
            for r in records
        ]


class PoisonSource(CounterSource):
    name = "poison-source"

    @classmethod
    def task_class(cls) -> type[Any]:
        return PoisonSourceTask


class RecordingConfig(ConfigModel):
    flush_upto: int = -1  # pre_commit confirms offsets only up to this one (-1: everything)
    fail_times: int = 0


class RecordingTask(SinkTask):
    def start(self, config: Mapping[str, Any]) -> None:
        self.name = config["connector"]
        self.config = RecordingConfig.parse(config)
        with STATE.lock:
            STATE.starts[self.name] += 1
            self.fail = STATE.starts[self.name] <= self.config.fail_times

    def open(self, partitions: Sequence[TopicPartition]) -> None:
        with STATE.lock:
            STATE.opened[self.name].extend(partitions)

    def put(self, records: Sequence[SinkRecord]) -> None:
        if self.fail and records:
            raise RuntimeError("recording task failing on purpose")
        with STATE.lock:
            STATE.received[self.name].extend(records)

    def pre_commit(self, offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        if self.config.flush_upto < 0:
            return offsets
        return {tp: min(o, self.config.flush_upto) for tp, o in offsets.items()}

    def stop(self) -> None:
        pass


class RecordingSink(SinkConnector):
    name = "recording"
    config_model = RecordingConfig

    def start(self, config: Any) -> None:
        self.raw = config.raw()

    @classmethod
    def task_class(cls) -> type[Any]:
        return RecordingTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [{**self.raw, "connector": self.raw["name"]}]


def _index(*classes: type[Any]) -> dict[str, type[Any]]:
    return {name: cls for cls in classes for name in (cls.name, *cls.aliases)}


class SampleRegistry:
    """Stand-in for ``hub.plugins.registry.PluginRegistry`` (the methods the runtime uses)."""

    def connectors(self) -> dict[str, type[Any]]:
        return _index(CounterSource, PoisonSource, RecordingSink)

    def transforms(self) -> dict[str, type[Any]]:
        return {}

    def predicates(self) -> dict[str, type[Any]]:
        return {}

    def converters(self) -> dict[str, type[Any]]:
        return _index(JsonConverter, StringConverter)

    def header_converters(self) -> dict[str, type[Any]]:
        return {}
