"""Test connectors, registered through a plugin object like any third-party plugin.

Cross-task state (records a sink received, how often a task failed) lives in ``STATE``, keyed
by connector name, because the worker creates a new task object on every (re)start.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from hub.api import (
    ConfigModel,
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    RetriableError,
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
    TopicPartition,
)
from hub.plugins.hookspecs import hookimpl
from hub.plugins.manager import create_plugin_manager


class State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.received: dict[str, list[SinkRecord]] = defaultdict(list)
        self.starts: dict[str, int] = defaultdict(int)
        self.opened: dict[str, list[TopicPartition]] = defaultdict(list)
        self.retries: dict[str, int] = defaultdict(int)
        self.empty_puts: dict[str, int] = defaultdict(int)


STATE = State()


class CounterConfig(ConfigModel):
    topic: str
    count: int = 100
    batch: int = 10
    partitions: int = 1
    fail_times: int = 0  # the first N task starts raise from poll
    poll_delay_ms: int = 0
    fail_connector: bool = False  # CounterSource.start raises
    poison: str = "object"  # poison-source: "object" (no converter can write it) or "string"


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
        if config.fail_connector:
            raise RuntimeError("connector refuses to start")
        self.raw = config.raw()

    @classmethod
    def task_class(cls) -> type[Any]:
        return CounterTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [{**self.raw, "connector": self.raw["name"]}]


class Unserialisable:
    def __str__(self) -> str:
        return "unserialisable"


class PoisonSourceTask(CounterTask):
    """Every 3rd record carries a value no converter can serialise."""

    def poll(self) -> list[SourceRecord] | None:
        records = super().poll() or []
        poison = "poison" if self.config.poison == "string" else {"bad": Unserialisable()}
        return [r.replace(value=poison) if r.source_offset["n"] % 3 == 0 else r for r in records]


class PoisonSource(CounterSource):
    name = "poison-source"
    aliases = ()

    @classmethod
    def task_class(cls) -> type[Any]:
        return PoisonSourceTask


class RecordingConfig(ConfigModel):
    flush_upto: int = -1  # pre_commit confirms offsets only up to this one (-1: everything)
    fail_times: int = 0
    retriable_puts: int = 0  # the first N non-empty puts raise RetriableError
    rewind_to: int = -1  # on open, context.offset(tp, rewind_to) for every partition
    report_bad: bool = False  # records whose value has a "bad" key go to the errant reporter


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
        if self.config.rewind_to >= 0:
            for tp in partitions:
                self.context.offset(tp, self.config.rewind_to)

    def put(self, records: Sequence[SinkRecord]) -> None:
        if not records:
            with STATE.lock:
                STATE.empty_puts[self.name] += 1
        if self.fail and records:
            raise RuntimeError("recording task failing on purpose")
        if records and self.config.retriable_puts > 0:
            with STATE.lock:
                STATE.retries[self.name] += 1
                if STATE.retries[self.name] <= self.config.retriable_puts:
                    raise RetriableError("not now")
        if self.config.report_bad:
            reporter = self.context.errant_record_reporter()  # type: ignore[attr-defined]
            bad = [r for r in records if isinstance(r.value, dict) and "bad" in r.value]
            for record in bad:
                reporter.report(record, ValueError(f"cannot write {record.value}"))
            records = [r for r in records if r not in bad]
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


class TxnCounterConfig(CounterConfig):
    commit_every: int = 25  # commit after every n-th record (a record-based request)
    abort_from: int = 0  # abort the transaction of the batch holding n == abort_from


class TxnCounterTask(CounterTask):
    """A counter defining its own transaction boundaries (``transaction.boundary=connector``):
    commits after every ``commit_every``-th record, aborts the batch holding ``abort_from``."""

    def start(self, config: Mapping[str, Any]) -> None:
        super().start(config)
        self.txn = TxnCounterConfig.parse(config)

    def poll(self) -> list[SourceRecord] | None:
        out = super().poll()
        ctx = self.context.transaction_context
        if not out or ctx is None:
            return out
        numbers = [r.value["n"] for r in out]  # type: ignore[index]
        if self.txn.abort_from in numbers:
            ctx.abort_transaction()
            return out
        for record, n in zip(out, numbers, strict=True):
            if n % self.txn.commit_every == 0:
                ctx.commit_transaction(record)
        return out


class TxnCounterSource(CounterSource):
    name = "txn-counter"
    aliases = ()
    config_model = TxnCounterConfig

    @classmethod
    def task_class(cls) -> type[Any]:
        return TxnCounterTask

    @classmethod
    def exactly_once_support(cls, config: Mapping[str, Any]) -> ExactlyOnceSupport | None:
        return ExactlyOnceSupport.SUPPORTED

    @classmethod
    def can_define_transaction_boundaries(
        cls, config: Mapping[str, Any]
    ) -> ConnectorTransactionBoundaries:
        return ConnectorTransactionBoundaries.SUPPORTED


class FanoutConfig(ConfigModel):
    extra_tasks: int = 0  # task configs beyond tasks.max (a connector bug KIP-1004 catches)


class IdleTask(SourceTask):
    """Polls nothing; its task config is whatever the connector made of it."""

    def start(self, config: Mapping[str, Any]) -> None:
        self.stopping = threading.Event()

    def poll(self) -> None:
        self.stopping.wait(0.05)

    def stop(self) -> None:
        self.stopping.set()


class FanoutSource(SourceConnector):
    """``tasks.max`` (+ ``extra_tasks``) idle tasks whose configs hold non-string values."""

    name = "fanout"
    config_model = FanoutConfig

    def start(self, config: Any) -> None:
        self.extra = config.extra_tasks

    @classmethod
    def task_class(cls) -> type[Any]:
        return IdleTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [
            {"index": i, "ratio": 0.5, "enabled": True, "tags": ["a", "b"], "nested": {"k": 1}}
            for i in range(max_tasks + self.extra)
        ]


class SamplePlugin:
    """Registers the sample connectors through the same hook a third-party package uses."""

    @hookimpl
    def sluice_connectors(self) -> list[type[Any]]:
        return [CounterSource, PoisonSource, RecordingSink, FanoutSource, TxnCounterSource]


def sample_registry() -> Any:
    """The real plugin registry (built-ins, no entry points) plus the sample connectors."""
    return create_plugin_manager([SamplePlugin()], load_entrypoints=False)
