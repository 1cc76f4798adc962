"""Turns the broker's counters and state into Prometheus metric families at scrape time.

Names are those the common Kafka JMX exporter rules give Kafka's MBeans (``kafka.server:
type=BrokerTopicMetrics,name=MessagesInPerSec,topic=t`` -> ``kafka_server_brokertopicmetrics_
messagesin_total{topic="t"}``), so dashboards and alerts written for Kafka work; consumer-group
lag uses the names of the common Kafka exporter (``kafka_consumergroup_lag``), since Kafka's
brokers have no lag metric. Everything not counted on the request path (log sizes, groups and
their lag, replication state) is read here, when Prometheus asks, so it costs nothing between
scrapes. Runs on the broker's event loop (``server.py``): it reads loop-owned state directly.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from broker.errors import UnknownTopicOrPartitionError
from broker.log._flush import FLUSH_BUCKETS_MS, flush_times
from broker.metrics.stats import REQUEST_BUCKETS_MS, request_name

if TYPE_CHECKING:
    from broker.app import Broker

_TOPIC = "kafka_server_brokertopicmetrics_"
_GROUPS = "kafka_coordinator_group_groupmetadatamanager_"
_GROUP_STATES = ("Stable", "PreparingRebalance", "CompletingRebalance", "Empty", "Dead")


def _buckets(bounds: tuple[float, ...], counts: list[int]) -> list[tuple[str, float]]:
    """Per-bucket counts -> Prometheus's cumulative ``le`` buckets, ``+Inf`` last."""
    out, total = [], 0
    for bound, count in zip((*map(floatToGoString, bounds), "+Inf"), counts, strict=True):
        total += count
        out.append((bound, float(total)))
    return out


class _Idle:
    """Kafka's NetworkProcessorAvgIdlePercent, approximated for one event loop: 1 minus the
    process's CPU time per wall-clock second since the previous sample (at most one a second,
    so concurrent scrapers share one reading)."""

    def __init__(self) -> None:
        self._wall = time.monotonic()
        self._cpu = time.process_time()
        self.value = 1.0

    def sample(self) -> float:
        wall, cpu = time.monotonic(), time.process_time()
        if wall - self._wall >= 1.0:
            busy = (cpu - self._cpu) / (wall - self._wall)
            self.value = min(1.0, max(0.0, 1.0 - busy))
            self._wall, self._cpu = wall, cpu
        return self.value


class BrokerCollector(Collector):
    """Every broker metric (docs/metrics.md lists them)."""

    def __init__(self, broker: Broker) -> None:
        self._broker = broker
        self._idle = _Idle()

    def collect(self) -> Iterator[Metric]:
        yield from self._topics()
        yield from self._requests()
        yield from self._network()
        yield from self._logs()
        yield from self._groups()
        yield from self._replication()
        yield from self._background()

    def _background(self) -> Iterator[Metric]:
        """Units (partitions, groups) whose background work keeps failing: the cleaner, flush,
        retention and group expiry retry them with backoff and go on with the others, so
        without this a poisoned partition would be visible only in the log."""
        failing = GaugeMetricFamily(
            "sluice_broker_background_failures",
            "Consecutive failures of a unit's background work (label task: log cleaner, "
            "log flush, log retention, group expiry...; unit: partition or group).",
            labels=["task", "unit"],
        )
        logs, coordinator = self._broker.logs, self._broker.coordinator
        failures = [*(logs.background_failures() if logs is not None else [])]
        if coordinator is not None:
            failures += coordinator.background_failures()
        for failure in failures:
            failing.add_metric([failure.task, failure.key], failure.failures)
        yield failing
        yield GaugeMetricFamily(
            "sluice_broker_background_failing_units",
            "Units whose background work is failing now (0 when all is well).",
            value=len(failures),
        )

    def _topics(self) -> Iterator[Metric]:
        stats = self._broker.stats
        topics = dict(stats.topics) if stats is not None else {}
        for name, attr, doc in (
            ("messagesin", "messages_in", "Records appended (per produced batch: its offsets)."),
            ("bytesin", "bytes_in", "Record batch bytes appended, as producers sent them."),
            ("bytesout", "bytes_out", "Record bytes served to consumers' fetches."),
            ("replicationbytesout", "replication_bytes_out", "Bytes served to followers."),
            ("totalproducerequests", "produce_requests", "Partitions of Produce requests."),
            ("totalfetchrequests", "fetch_requests", "Partitions of Fetch requests."),
            ("failedproducerequests", "failed_produce_requests", "Produces answered an error."),
            ("failedfetchrequests", "failed_fetch_requests", "Fetches answered an error."),
        ):
            family = CounterMetricFamily(_TOPIC + name, doc, labels=["topic"])
            for topic, counters in sorted(topics.items()):
                family.add_metric([topic], getattr(counters, attr))
            yield family

    def _requests(self) -> Iterator[Metric]:
        stats = self._broker.stats
        requests = dict(stats.requests) if stats is not None else {}
        count = CounterMetricFamily(
            "kafka_network_requestmetrics_requests",
            "Requests handled, by API.",
            labels=["request"],
        )
        timing = HistogramMetricFamily(
            "kafka_network_requestmetrics_totaltimems",
            "Time from a request read to its response built (ms), by API.",
            labels=["request"],
        )
        for api_key, r in sorted(requests.items()):
            name = request_name(api_key)
            count.add_metric([name], r.count)
            timing.add_metric([name], _buckets(REQUEST_BUCKETS_MS, r.buckets), r.sum_ms)
        yield count
        yield timing
        yield GaugeMetricFamily(
            "kafka_network_requestchannel_requestqueuesize",
            "Requests being handled now (each connection handles one at a time).",
            value=stats.in_flight if stats is not None else 0,
        )

    def _network(self) -> Iterator[Metric]:
        server = self._broker.server
        connections = GaugeMetricFamily(
            "kafka_server_socketservermetrics_connection_count",
            "Open client connections.",
            labels=["listener"],
        )
        listeners = self._broker.servers
        for listener in listeners:  # one series per listener, Kafka's ``listener`` label
            security = listener.security
            name = security.listener.name if security is not None else "PLAINTEXT"
            connections.add_metric([name], listener.connection_count)
        if not listeners:
            connections.add_metric(["PLAINTEXT"], 0)
        yield connections
        if server is not None:
            queued = server.queued_bytes
            yield GaugeMetricFamily(
                "kafka_network_socketserver_memorypoolused",
                "Bytes reserved for requests being read or handled (queued.max.request.bytes).",
                value=queued.reserved,
            )
            if queued.limit is not None and queued.limit >= 0:
                yield GaugeMetricFamily(
                    "kafka_network_socketserver_memorypoolavailable",
                    "Bytes of queued.max.request.bytes still free.",
                    value=max(queued.limit - queued.reserved, 0),
                )
        yield GaugeMetricFamily(
            "kafka_network_socketserver_networkprocessoravgidlepercent",
            "Fraction of the last second the broker process did not use the CPU (0-1).",
            value=self._idle.sample(),
        )

    def _logs(self) -> Iterator[Metric]:
        logs = self._broker.logs
        plogs = logs.logs() if logs is not None else []
        size = GaugeMetricFamily(
            "kafka_log_log_size",
            "Bytes in the partition's segments.",
            labels=["topic", "partition"],
        )
        end = GaugeMetricFamily(
            "kafka_log_log_logendoffset", "Log end offset.", labels=["topic", "partition"]
        )
        start = GaugeMetricFamily(
            "kafka_log_log_logstartoffset", "Log start offset.", labels=["topic", "partition"]
        )
        segments = GaugeMetricFamily(
            "kafka_log_log_numlogsegments", "Segments.", labels=["topic", "partition"]
        )
        for plog in plogs:
            labels = [plog.topic, str(plog.partition)]
            size.add_metric(labels, plog.size_bytes())
            end.add_metric(labels, plog.log_end_offset)
            start.add_metric(labels, plog.log_start_offset)
            segments.add_metric(labels, len(plog.segments()))
        yield from (size, end, start, segments)
        _, total_ms, buckets = flush_times.snapshot()
        flush = HistogramMetricFamily(
            "kafka_log_logflushstats_logflushrateandtimems",
            "Flushes that fsynced segments, and how long they took (ms).",
        )
        flush.add_metric([], _buckets(FLUSH_BUCKETS_MS, buckets), total_ms)
        yield flush
        partitions, leaders = len(plogs), len(plogs)
        cluster = self._broker.cluster
        if cluster is not None:
            leaders = sum(1 for p in cluster.replicas.partitions.values() if p.is_leader)
        yield GaugeMetricFamily(
            "kafka_server_replicamanager_partitioncount",
            "Partitions with a replica on this broker.",
            value=partitions,
        )
        yield GaugeMetricFamily(
            "kafka_server_replicamanager_leadercount",
            "Partitions this broker leads.",
            value=leaders,
        )

    def _groups(self) -> Iterator[Metric]:
        coordinator = self._broker.coordinator
        groups: dict[str, Any] = {}
        committed: dict[str, dict[tuple[str, int], Any]] = {}
        if coordinator is not None and coordinator.active:
            groups = {g: v for g, v in coordinator.groups.groups.items() if coordinator.owns(g)}
            committed = {
                g: coordinator.offsets.fetch(g, None)
                for g in sorted(coordinator.offsets.groups())
                if coordinator.owns(g)
            }
        yield GaugeMetricFamily(
            _GROUPS + "numgroups", "Consumer groups this broker coordinates.", value=len(groups)
        )
        for state in _GROUP_STATES:
            yield GaugeMetricFamily(
                _GROUPS + "numgroups" + state.lower(),
                f"Coordinated consumer groups in state {state}.",
                value=sum(1 for g in groups.values() if g.state.value == state),
            )
        current = GaugeMetricFamily(
            "kafka_consumergroup_current_offset",
            "Committed offset of the group on the partition.",
            labels=["consumergroup", "topic", "partition"],
        )
        lag = GaugeMetricFamily(
            "kafka_consumergroup_lag",
            "High watermark minus committed offset (partitions with a local replica).",
            labels=["consumergroup", "topic", "partition"],
        )
        logs = self._broker.logs
        for group, offsets in committed.items():
            for (topic, partition), value in sorted(offsets.items()):
                labels = [group, topic, str(partition)]
                current.add_metric(labels, value.offset)
                end = _high_watermark(logs, topic, partition)
                if end is not None and value.offset >= 0:
                    lag.add_metric(labels, max(end - value.offset, 0))
        yield current
        yield lag

    def _replication(self) -> Iterator[Metric]:
        cluster = self._broker.cluster
        under = under_min = offline = shrinks = expands = 0
        controller = 0
        if cluster is not None:
            replicas = cluster.replicas
            for p in replicas.partitions.values():
                if not p.is_leader:
                    continue
                under += len(p.isr) < len(p.replicas)
                under_min += len(p.isr) < p.log.config.min_insync_replicas
            shrinks, expands = replicas.isr_shrinks, replicas.isr_expands
            controller = int(cluster.controller.active)
            if controller:
                cache = cluster.cache
                offline = sum(1 for tp in cache.states if cache.leader_of(*tp) < 0)
        yield GaugeMetricFamily(
            "kafka_server_replicamanager_underreplicatedpartitions",
            "Partitions led here whose ISR is smaller than their replica set.",
            value=under,
        )
        yield GaugeMetricFamily(
            "kafka_server_replicamanager_underminisrpartitioncount",
            "Partitions led here with fewer in-sync replicas than min.insync.replicas.",
            value=under_min,
        )
        yield CounterMetricFamily(
            "kafka_server_replicamanager_isrshrinks", "ISR shrinks written by this leader.",
            value=shrinks,
        )  # fmt: skip
        yield CounterMetricFamily(
            "kafka_server_replicamanager_isrexpands", "ISR expansions written by this leader.",
            value=expands,
        )  # fmt: skip
        yield GaugeMetricFamily(
            "kafka_controller_kafkacontroller_activecontrollercount",
            "1 on the broker that is the active controller, else 0.",
            value=controller,
        )
        yield GaugeMetricFamily(
            "kafka_controller_kafkacontroller_offlinepartitionscount",
            "Partitions without a live leader (reported by the active controller only).",
            value=offline,
        )


def _high_watermark(logs: Any, topic: str, partition: int) -> int | None:
    if logs is None:
        return None
    try:
        return int(logs.log(topic, partition).high_watermark)
    except UnknownTopicOrPartitionError:  # no local replica: no lag from this broker
        return None
