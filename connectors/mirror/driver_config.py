"""MirrorMaker 2's dedicated-mode config (``mm2.properties``) -> one worker and three connector
configs per replication flow, as Kafka's ``MirrorMakerConfig`` derives them.

The file names the clusters and the flows between them::

    clusters = A, B
    A.bootstrap.servers = a1:9092
    B.bootstrap.servers = b1:9092
    A->B.enabled = true
    A->B.topics = orders, payments
    replication.factor = 1

- ``<alias>.<key>``: that cluster's settings. Client keys (``bootstrap.servers``,
  ``security.protocol``, ``ssl.*``, ``sasl.*``) reach every client of that cluster; the same keys
  without a prefix reach every cluster. ``<alias>.consumer.*`` (``producer.``, ``admin.``) tune
  that cluster's clients; any other ``<alias>.<key>`` is a worker setting of the flows that
  *target* the cluster (``B.offset.flush.interval.ms``).
- ``<source>-><target>.<key>``: that flow's connector settings (``A->B.enabled``,
  ``A->B.topics``, ...), over the top-level connector keys.
- A flow runs (a worker, on its target cluster) when ``<s>-><t>.enabled`` is true, or when
  heartbeats are enabled (the default): a flow that is not enabled still emits heartbeats into
  its target, so the reverse flow can mirror them, exactly as in Kafka. Its MirrorSource and
  MirrorCheckpoint connectors then have ``enabled=false`` and run no tasks.
- Each flow's worker keeps its state in ``mm2-configs.<source>.internal``,
  ``mm2-offsets.<source>.internal`` and ``mm2-status.<source>.internal`` on the target (Kafka's
  names, overridable with the top-level ``*.storage.topic`` keys), uses group ``<source>-mm2``
  and byte-array converters. The storage replication factors
  (``offset.storage.replication.factor``, ...) set the worker's ``replication.factor``.

Keys that are none of these raise ``DriverConfigError`` naming them (Kafka would ignore them);
``config.providers`` and the multi-node internal REST server are not supported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from connectors.mirror.clients import CLUSTER_KEY
from connectors.mirror.config import (
    BYTE_ARRAY_CONVERTER,
    MirrorCheckpointConfig,
    MirrorHeartbeatConfig,
    MirrorSourceConfig,
)
from connectors.mirror.errors import DriverConfigError
from connectors.mirror.filters import split_list

CONNECTOR_CLASSES = (
    ("MirrorSourceConnector", "org.apache.kafka.connect.mirror.MirrorSourceConnector"),
    ("MirrorCheckpointConnector", "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"),
    ("MirrorHeartbeatConnector", "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"),
)
# Kafka Connect's connector keys that MirrorMaker 2 also takes from the top level.
_CONNECT_KEYS = frozenset(
    {"tasks.max", "key.converter", "value.converter", "header.converter", "transforms",
     "predicates", "errors.tolerance", "errors.retry.timeout", "errors.retry.delay.max.ms",
     "errors.log.enable", "errors.log.include.messages"}
)  # fmt: skip
_WORKER_PREFIXES = ("offset.storage", "config.storage", "status.storage", "key.converter",
                    "value.converter", "header.converter", "task", "worker")  # fmt: skip
_CLIENT_PREFIX = re.compile(r"(consumer|producer|admin)\..+")
_STORAGE_RF = ("offset.storage.replication.factor", "config.storage.replication.factor",
               "status.storage.replication.factor")  # fmt: skip


def connector_keys() -> frozenset[str]:
    """Every key a mirror connector takes (Kafka's ``allConfigNames``)."""
    names: set[str] = set(_CONNECT_KEYS)
    for model in (MirrorSourceConfig, MirrorCheckpointConfig, MirrorHeartbeatConfig):
        names.update(f.alias or n for n, f in model.model_fields.items())
    return frozenset(names)


@dataclass
class Flow:
    """One replication flow: ``source`` -> ``target``, run by one worker on the target."""

    source: str
    target: str
    worker: dict[str, str]
    connectors: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.source}->{self.target}"


def _true(value: str | None, default: bool) -> bool:
    return default if value is None else value.strip().lower() == "true"


class DriverConfig:
    def __init__(self, raw: Mapping[str, str]) -> None:
        self.raw = {k.strip(): str(v).strip() for k, v in raw.items()}
        if "clusters" not in self.raw:
            raise DriverConfigError("clusters: missing (e.g. clusters = A, B)")
        self.clusters = split_list(self.raw["clusters"])
        if len(self.clusters) < 2:
            raise DriverConfigError("clusters: name at least two cluster aliases")
        for unsupported in ("config.providers",):
            if unsupported in self.raw:
                raise DriverConfigError(f"{unsupported}: not supported by sluice mirror")
        if _true(self.raw.get("dedicated.mode.enable.internal.rest"), False):
            raise DriverConfigError(
                "dedicated.mode.enable.internal.rest: sluice mirror runs one process per file"
            )
        self._check_keys()

    def _check_keys(self) -> None:
        known = connector_keys()
        aliases = sorted(self.clusters, key=len, reverse=True)
        unknown = []
        for key in self.raw:
            if key in ("clusters", "dedicated.mode.enable.internal.rest") or key in known:
                continue
            if CLUSTER_KEY.fullmatch(key) or key.startswith(_WORKER_PREFIXES):
                continue
            if key.startswith("replication.policy"):
                continue
            if any(key.startswith(f"{a}.") for a in aliases):
                continue
            if "->" in key and any(
                key.startswith(f"{s}->{t}.") for s in aliases for t in aliases if s != t
            ):
                continue
            unknown.append(key)
        if unknown:
            raise DriverConfigError(
                f"{', '.join(sorted(unknown))}: not MirrorMaker 2 settings (cluster settings "
                "take an '<alias>.' prefix, flow settings '<source>-><target>.')"
            )

    # -- clusters ------------------------------------------------------------------------------
    def cluster(self, alias: str) -> dict[str, str]:
        """Kafka's ``clusterProps``: ``<alias>.*`` stripped, client keys copied to
        ``producer.``/``consumer.``/``admin.`` and taken from the top level when absent."""
        prefix = f"{alias}."
        props = {k[len(prefix) :]: v for k, v in self.raw.items() if k.startswith(prefix)}
        for source in (
            dict(props),
            {k: v for k, v in self.raw.items() if CLUSTER_KEY.fullmatch(k)},
        ):
            for key, value in source.items():
                if CLUSTER_KEY.fullmatch(key):
                    props.setdefault(key, value)
                    for kind in ("producer", "consumer", "admin"):
                        props.setdefault(f"{kind}.{key}", value)
        if "bootstrap.servers" not in props:
            raise DriverConfigError(f"{alias}.bootstrap.servers: missing")
        return props

    # -- flows ---------------------------------------------------------------------------------
    def flows(self) -> list[Flow]:
        heartbeats = _true(self.raw.get("emit.heartbeats.enabled"), True)
        out = []
        for source in self.clusters:
            for target in self.clusters:
                if source == target:
                    continue
                prefix = f"{source}->{target}."
                enabled = _true(self.raw.get(prefix + "enabled"), False)
                beats = _true(self.raw.get(prefix + "emit.heartbeats.enabled"), heartbeats)
                if enabled or beats:
                    out.append(self.flow(source, target))
        return out

    def flow(self, source: str, target: str) -> Flow:
        return Flow(source, target, self.worker(source, target), self.connectors(source, target))

    def worker(self, source: str, target: str) -> dict[str, str]:
        """Kafka's ``workerConfig`` for the flow, in Sluice's worker keys."""
        props = {k: v for k, v in self.cluster(target).items() if not CLUSTER_KEY.fullmatch(k)
                 or k == "bootstrap.servers"}  # fmt: skip
        for key, value in self.raw.items():
            if key.startswith((*_WORKER_PREFIXES, "replication.policy")):
                props[key] = value
        props.setdefault("group.id", f"{source}-mm2")
        props.setdefault("offset.storage.topic", f"mm2-offsets.{source}.internal")
        props.setdefault("status.storage.topic", f"mm2-status.{source}.internal")
        props.setdefault("config.storage.topic", f"mm2-configs.{source}.internal")
        for role in ("key", "value", "header"):
            props.setdefault(f"{role}.converter", BYTE_ARRAY_CONVERTER)
        factors = [int(props.pop(k)) for k in _STORAGE_RF if k in props]
        if factors:
            props["replication.factor"] = str(max(factors))
        props["rest.advertised.host.name"] = f"{source}->{target}"
        props["rest.port"] = "0"
        return props

    def connectors(self, source: str, target: str) -> dict[str, dict[str, str]]:
        """Kafka's ``connectorBaseConfig`` for the flow's three connectors, by name."""
        base = {k: v for k, v in self.raw.items() if k in connector_keys()}
        base.update({k: v for k, v in self.raw.items() if k.startswith("replication.policy")})
        for side, alias in (("source", source), ("target", target)):
            for key, value in self.cluster(alias).items():
                if CLUSTER_KEY.fullmatch(key):
                    base[f"{side}.cluster.{key}"] = value
                elif _CLIENT_PREFIX.fullmatch(key):
                    base[f"{side}.{key}"] = value
        flow_prefix = f"{source}->{target}."
        overrides = {k[len(flow_prefix) :]: v for k, v in self.raw.items()
                     if k.startswith(flow_prefix)}  # fmt: skip
        out = {}
        for name, java_class in CONNECTOR_CLASSES:
            config = dict(base)
            config.update(
                {"name": name, "connector.class": java_class, "source.cluster.alias": source,
                 "target.cluster.alias": target}
            )  # fmt: skip
            for role in ("key", "value", "header"):
                config.setdefault(f"{role}.converter", BYTE_ARRAY_CONVERTER)
            config.update(overrides)
            config.setdefault("enabled", "false")
            out[name] = config
        return out


def parse_properties(text: str) -> dict[str, str]:
    """Java ``.properties`` as MM2 files use them: ``k = v`` / ``k: v``, ``#``/``!`` comments,
    ``\\`` line continuations."""
    out: dict[str, str] = {}
    lines: Iterable[str] = text.splitlines()
    pending = ""
    for line in lines:
        stripped = line.strip()
        if not pending and (not stripped or stripped[0] in "#!"):
            continue
        if stripped.endswith("\\") and not stripped.endswith("\\\\"):
            pending += stripped[:-1]
            continue
        stripped = pending + stripped
        pending = ""
        match = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)$", stripped)
        if match is None:
            out[stripped] = ""
        else:
            out[match.group(1)] = match.group(2)
    return out
