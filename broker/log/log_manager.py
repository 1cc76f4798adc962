"""LogManager: every topic's partition logs in one data directory, and their metadata.

Layout: ``<data_dir>/<topic>-<partition>/`` per partition (see ``files``) and
``<data_dir>/topics.json`` holding, per topic, its id, partition count and config *overrides*
(the effective config is ``defaults`` + overrides). ``topics.json`` is replaced atomically
(write a temp file, fsync it, rename, fsync the directory), so after a crash it is either the
old or the new version, never a mix.

Ordering makes each operation crash-safe: a topic's directories are created before the
metadata names it, and the metadata forgets a topic before its directories are removed (first
renamed to ``*.deleted``, which ``load`` finishes deleting). A partition directory the metadata
does not name is an orphan of an interrupted create; it is ignored, and replaced if that topic
is created again.

Background work (``start``): one thread applies ``flush.ms`` and retention, another runs the
log cleaner for compacted topics. ``run_flush``/``run_retention``/``run_cleaner`` are the same
passes, callable directly (tests drive them with an injected clock instead of sleeping). Each
pass works partition by partition: a partition that fails is logged by name, retried on a
growing schedule (``broker.background``) and listed by ``background_failures()``; the other
partitions are never skipped because of it.

Descriptors: segment files are opened on demand through the process-wide bounded cache of
``_handles`` (sized at ``load`` from ``max_open_segments``, default half the open-files limit),
so the number of partitions is not limited by descriptors. Creating a topic or partitions is
all or nothing: if any partition cannot be created (out of descriptors, disk full), the ones
already made are removed and the caller gets ``StorageError``.

Thread safety: metadata changes are serialised by ``_lock``; ``log()``/``topic()`` read an
immutable snapshot and never block behind them.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import threading
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from broker.background import FailureTracker, TaskFailure
from broker.errors import (
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidTopicError,
    StorageError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from broker.log import _handles, files
from broker.log._atomic import write_atomically
from broker.log.cleaner import LogCleaner
from broker.log.config import TOPIC_CONFIGS, LogConfig
from broker.log.partition_log import Clock, PartitionLog, wall_clock_ms
from broker.log.records import missing_codecs

log = logging.getLogger(__name__)

FLUSH_RETRY_MS = (1_000, 2_000, 5_000, 10_000, 30_000, 60_000)
RETENTION_RETRY_MS = (15_000, 30_000, 60_000, 120_000, 300_000)

_LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")


@dataclass(frozen=True)
class TopicInfo:
    name: str
    topic_id: uuid.UUID
    partitions: int
    configs: dict[str, str]  # overrides only


class LogManager:
    """Owns all PartitionLogs under ``data_dir``; see the module docstring."""

    def __init__(
        self,
        data_dir: Path,
        defaults: LogConfig = LogConfig(),  # noqa: B008 - frozen dataclass, safe to share
        *,
        clock: Clock = wall_clock_ms,
        retention_check_interval_ms: int = 300_000,
        flush_check_interval_ms: int = 1_000,
        cleaner_backoff_ms: int = 15_000,
        max_open_segments: int | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.defaults = defaults
        self.clock = clock
        self.retention_check_interval_ms = retention_check_interval_ms
        self.flush_check_interval_ms = flush_check_interval_ms
        self.cleaner_backoff_ms = cleaner_backoff_ms
        self.max_open_segments = max_open_segments  # None: half the descriptor limit
        self.cleaner = LogCleaner(clock=clock)
        self._flush_failures = FailureTracker("log flush", FLUSH_RETRY_MS, logger=log)
        self._retention_failures = FailureTracker("log retention", RETENTION_RETRY_MS, logger=log)
        self._lock = threading.RLock()
        self._topics: dict[str, TopicInfo] = {}
        self._logs: dict[tuple[str, int], PartitionLog] = {}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    # ------------------------------------------------------------ startup

    def load(self) -> None:
        """Reads ``topics.json`` and opens (recovering) every partition log."""
        cache = _handles.configure(self.max_open_segments)
        log.info("segment file cache", extra={"max_open_segments": cache.capacity})
        with self._lock:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            for path in self.data_dir.iterdir():
                if path.is_dir() and path.name.endswith(files.DELETED_SUFFIX):
                    shutil.rmtree(path, ignore_errors=True)
            meta = self.data_dir / files.TOPICS_FILE
            raw = json.loads(meta.read_text()) if meta.exists() else {"topics": {}}
            topics = {}
            for name, doc in raw["topics"].items():
                topics[name] = TopicInfo(
                    name, uuid.UUID(doc["topic_id"]), int(doc["partitions"]), dict(doc["configs"])
                )
            for info in topics.values():
                config = LogConfig.from_topic_configs(info.configs, self.defaults)
                for p in range(info.partitions):
                    self._logs[(info.name, p)] = self._open(info.name, p, config)
            self._topics = topics
            known = {files.partition_dir(self.data_dir, t, p).name for t, p in self._logs}
            for path in self.data_dir.iterdir():
                if (
                    path.is_dir()
                    and files.parse_partition_dir(path.name)
                    and path.name not in known
                ):
                    log.warning("ignoring partition directory %s: no topic metadata names it", path)
            log.info(
                "loaded %d topic(s), %d partition(s) from %s",
                len(topics),
                len(self._logs),
                self.data_dir,
            )

    def _open(self, topic: str, partition: int, config: LogConfig) -> PartitionLog:
        directory = files.partition_dir(self.data_dir, topic, partition)
        return PartitionLog.open(directory, topic, partition, config, clock=self.clock)

    def _persist(self, topics: dict[str, TopicInfo]) -> None:
        doc = {
            "version": 1,
            "topics": {
                t.name: {
                    "topic_id": str(t.topic_id),
                    "partitions": t.partitions,
                    "configs": t.configs,
                }
                for t in topics.values()
            },
        }
        data = json.dumps(doc, indent=1, sort_keys=True).encode()
        write_atomically(self.data_dir / files.TOPICS_FILE, data, sync_dir=True)

    # ------------------------------------------------------------ topics

    def create_topic(
        self,
        name: str,
        partitions: int,
        configs: Mapping[str, str] = {},
        *,
        validate_only: bool = False,
        topic_id: uuid.UUID | None = None,
    ) -> TopicInfo:
        """``topic_id``: the cluster-wide id when a cluster broker mirrors a topic from
        ZooKeeper; a new random one otherwise."""
        _check_topic_name(name)
        if partitions < 1:
            raise InvalidPartitionsError(
                f"topic {name!r} needs at least 1 partition, got {partitions}"
            )
        overrides = {k: str(v) for k, v in configs.items()}
        config = LogConfig.from_topic_configs(overrides, self.defaults)
        with self._lock:
            if name in self._topics:
                raise TopicAlreadyExistsError(f"topic {name!r} already exists")
            info = TopicInfo(name, topic_id or uuid.uuid4(), partitions, overrides)
            if validate_only:
                return info
            topics = {**self._topics, name: info}
            opened = self._open_new(name, range(partitions), config, f"create topic {name!r}")
            try:
                self._persist(topics)
            except OSError as exc:
                self._discard(opened)
                raise _storage_error(f"create topic {name!r}", exc) from exc
            self._logs.update(opened)
            self._topics = topics
            log.info(
                "created topic %s with %d partition(s), overrides %s", name, partitions, overrides
            )
            return info

    def _open_new(
        self, topic: str, partitions: range, config: LogConfig, what: str
    ) -> dict[tuple[str, int], PartitionLog]:
        """Creates the partition directories of a new topic (or new partitions), all or none.

        A failure part way (out of descriptors, disk full) closes and removes what was
        created, so no half-created topic is left behind, and raises ``StorageError``.
        """
        opened: dict[tuple[str, int], PartitionLog] = {}
        try:
            for p in partitions:
                stale = files.partition_dir(self.data_dir, topic, p)
                if stale.exists():
                    shutil.rmtree(stale)
                opened[(topic, p)] = self._open(topic, p, config)
        except (OSError, StorageError) as exc:
            self._discard(opened)
            for p in partitions:
                shutil.rmtree(files.partition_dir(self.data_dir, topic, p), ignore_errors=True)
            if isinstance(exc, StorageError):
                raise StorageError(f"could not {what}: {exc}; nothing was created") from exc
            raise _storage_error(what, exc) from exc
        return opened

    def _discard(self, opened: dict[tuple[str, int], PartitionLog]) -> None:
        for (topic, p), plog in opened.items():
            try:
                plog.close()
            except Exception as exc:  # rolling back: the directory goes anyway
                log.warning("%s close during rollback failed: %s", plog.ident, exc)
            shutil.rmtree(files.partition_dir(self.data_dir, topic, p), ignore_errors=True)

    def delete_topic(self, name: str) -> None:
        with self._lock:
            info = self.topic(name)
            topics = {k: v for k, v in self._topics.items() if k != name}
            self._persist(topics)
            self._topics = topics
            for p in range(info.partitions):
                plog = self._logs.pop((name, p))
                plog.close()
                directory = plog.directory
                doomed = files.deleted_dir(directory, uuid.uuid4().hex)
                os.replace(directory, doomed)
                shutil.rmtree(doomed, ignore_errors=True)
            log.info("deleted topic %s", name)

    def create_partitions(self, name: str, total: int) -> TopicInfo:
        with self._lock:
            info = self.topic(name)
            if total <= info.partitions:
                raise InvalidPartitionsError(
                    f"topic {name!r} has {info.partitions} partition(s); the new total must be "
                    f"larger, got {total}"
                )
            config = self.effective_config(name)
            what = f"add partitions to {name!r}"
            opened = self._open_new(name, range(info.partitions, total), config, what)
            new = TopicInfo(name, info.topic_id, total, info.configs)
            topics = {**self._topics, name: new}
            try:
                self._persist(topics)
            except OSError as exc:
                self._discard(opened)
                raise _storage_error(what, exc) from exc
            self._logs.update(opened)
            self._topics = topics
            log.info("topic %s now has %d partitions", name, total)
            return new

    def alter_configs(
        self,
        name: str,
        set_: Mapping[str, str],
        delete: Iterable[str] = (),
        *,
        replace: bool = False,
    ) -> TopicInfo:
        """Changes a topic's overrides: ``replace`` = AlterConfigs (the set becomes the whole
        override map), otherwise IncrementalAlterConfigs (set, then delete = back to default)."""
        with self._lock:
            info = self.topic(name)
            overrides = {} if replace else dict(info.configs)
            overrides.update({k: str(v) for k, v in set_.items()})
            for key in delete:
                if key not in TOPIC_CONFIGS:
                    raise InvalidConfigError(f"unknown topic config {key!r}")
                overrides.pop(key, None)
            config = LogConfig.from_topic_configs(overrides, self.defaults)
            new = TopicInfo(name, info.topic_id, info.partitions, overrides)
            topics = {**self._topics, name: new}
            self._persist(topics)
            self._topics = topics
            for p in range(info.partitions):
                self._logs[(name, p)].update_config(config)
            log.info("topic %s config overrides now %s", name, overrides)
            return new

    def topics(self) -> dict[str, TopicInfo]:
        return dict(self._topics)

    def topic(self, name: str) -> TopicInfo:
        try:
            return self._topics[name]
        except KeyError:
            raise UnknownTopicOrPartitionError(f"unknown topic {name!r}") from None

    def log(self, topic: str, partition: int) -> PartitionLog:
        try:
            return self._logs[(topic, partition)]
        except KeyError:
            raise UnknownTopicOrPartitionError(
                f"unknown topic partition {topic}-{partition}"
            ) from None

    def logs(self) -> list[PartitionLog]:
        return list(self._logs.values())

    def effective_config(self, name: str) -> LogConfig:
        return LogConfig.from_topic_configs(self.topic(name).configs, self.defaults)

    # ------------------------------------------------------------ background work

    def run_flush(self, now_ms: int | None = None) -> int:
        """Applies ``flush.ms`` (and flushes rolled segments); returns partitions flushed."""
        now = self.clock() if now_ms is None else now_ms
        plogs = self.logs()
        tracker = self._flush_failures
        flushed = sum(
            tracker.run(p.directory.name, now, partial(p.maybe_flush, now)) for p in plogs
        )
        tracker.retain(p.directory.name for p in plogs)
        return flushed

    def run_retention(self, now_ms: int | None = None) -> int:
        """Applies retention to every partition; returns segments deleted."""
        now = self.clock() if now_ms is None else now_ms
        plogs = self.logs()
        tracker = self._retention_failures
        deleted = sum(
            tracker.run(p.directory.name, now, partial(p.delete_old_segments, now)) for p in plogs
        )
        tracker.retain(p.directory.name for p in plogs)
        return deleted

    def run_cleaner(self, now_ms: int | None = None) -> int:
        """One cleaner pass over every compacted partition; returns segments rewritten."""
        return self.cleaner.clean_all(self.logs(), now_ms)

    def background_failures(self) -> list[TaskFailure]:
        """Partitions whose flush, retention or cleaning is failing now (for metrics/status)."""
        return [
            *self._flush_failures.failures(),
            *self._retention_failures.failures(),
            *self.cleaner.uncleanable_partitions,
        ]

    def start(self) -> None:
        """Starts the flush/retention thread and the cleaner thread (daemons)."""
        missing = missing_codecs()
        if missing:
            log.error(
                "this installation cannot decode some compression codecs: the cleaner and "
                "ListOffsets by timestamp fail for topics using them; reinstall sluice with its "
                "dependencies",
                extra={"missing": ",".join(missing)},
            )
        self._stop.clear()
        self._threads = [
            threading.Thread(target=self._maintenance_loop, name="log-maintenance", daemon=True),
            threading.Thread(target=self._cleaner_loop, name="log-cleaner", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _maintenance_loop(self) -> None:
        next_retention = self.clock()
        while not self._stop.wait(self.flush_check_interval_ms / 1000):
            try:
                self.run_flush()
                if self.clock() >= next_retention:
                    self.run_retention()
                    next_retention = self.clock() + self.retention_check_interval_ms
            except Exception:  # a bug in the pass itself (partitions fail one by one)
                log.exception("log maintenance pass failed")

    def _cleaner_loop(self) -> None:
        while not self._stop.wait(self.cleaner_backoff_ms / 1000):
            try:
                self.run_cleaner()
            except Exception:
                log.exception("log cleaner pass failed")

    def close(self) -> None:
        """Stops background threads, then flushes and closes every log."""
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self._threads = []
        with self._lock:
            for plog in self._logs.values():
                plog.close()


def _storage_error(what: str, exc: OSError) -> StorageError:
    return StorageError(f"could not {what}: {exc.strerror or exc}; nothing was created")


def _check_topic_name(name: str) -> None:
    if name in (".", "..") or not _LEGAL_TOPIC.match(name):
        raise InvalidTopicError(
            f"invalid topic name {name!r}: use 1-249 characters from [a-zA-Z0-9._-], "
            "not '.' or '..'"
        )
