"""The ZooKeeper layout of a cluster: paths and JSON payloads, as Kafka's ZooKeeper era kept them.

::

    /cluster/id                                   {"version":"1","id":"<cluster id>"}
    /controller                  (ephemeral)      {"version":1,"brokerid":1,"timestamp":"…"}
    /controller_epoch                             "7"
    /brokers/ids/<id>            (ephemeral)      {"version":5,"host":…,"port":…,"endpoints":[…],…}
    /brokers/topics/<topic>                       {"version":3,"partitions":{"0":[1,2,3]},
                                                   "topic_id":"<base64 uuid>",
                                                   "adding_replicas":{},"removing_replicas":{}}
    /brokers/topics/<topic>/partitions/<p>/state  {"version":1,"controller_epoch":7,"leader":1,
                                                   "leader_epoch":4,"isr":[1,2,3]}
    /config/topics/<topic>                        {"version":1,"config":{"retention.ms":"…"}}
    /admin/delete_topics/<topic>                  (empty: a deletion request)
    /admin/preferred_replica_election             {"version":1,"partitions":[{"topic","partition"}]}
    /latest_producer_id_block                     {"version":1,"broker":1,"block_start":"0",
                                                   "block_end":"999"}
    /sluice/controlled_shutdown/<id> (ephemeral)  a broker asking to lose its leaderships

Only the last node is not Kafka's (Kafka sends a ControlledShutdown request to the controller);
docs/cluster.md explains why. Partition state znodes carry the ZooKeeper ``version`` (``Stat``)
that every writer passes back on update, so a controller and a leader changing the same
partition at once cannot overwrite each other: one of them gets BadVersion and re-reads.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

CLUSTER_ID = "/cluster/id"
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
BROKER_IDS = "/brokers/ids"
TOPICS = "/brokers/topics"
CONFIG_TOPICS = "/config/topics"
DELETE_TOPICS = "/admin/delete_topics"
PREFERRED_ELECTION = "/admin/preferred_replica_election"
REASSIGN_PARTITIONS = "/admin/reassign_partitions"
PRODUCER_ID_BLOCK = "/latest_producer_id_block"
CONTROLLED_SHUTDOWN = "/sluice/controlled_shutdown"
PERSISTENT_PATHS = (BROKER_IDS, TOPICS, CONFIG_TOPICS, DELETE_TOPICS, CONTROLLED_SHUTDOWN)

NO_LEADER = -1


def broker_path(broker_id: int) -> str:
    return f"{BROKER_IDS}/{broker_id}"


def topic_path(topic: str) -> str:
    return f"{TOPICS}/{topic}"


def partition_state_path(topic: str, partition: int) -> str:
    return f"{TOPICS}/{topic}/partitions/{partition}/state"


def topic_config_path(topic: str) -> str:
    return f"{CONFIG_TOPICS}/{topic}"


def _dumps(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


@dataclass(frozen=True)
class BrokerInfo:
    """A live broker as registered under /brokers/ids: ``host``/``port`` are its
    inter-broker (PLAINTEXT) address, ``endpoints`` every listener's advertised address
    (name, protocol, host, port), Kafka's ``endpoints`` and ``listener_security_protocol_map``."""

    broker_id: int
    host: str
    port: int
    rack: str | None = None
    endpoints: tuple[tuple[str, str, str, int], ...] = ()

    def address_for(self, listener: str) -> tuple[str, int]:
        """Where a client of ``listener`` reaches this broker (its inter-broker address if
        the broker has no such listener)."""
        for name, _proto, host, port in self.endpoints:
            if name == listener:
                return host, port
        return self.host, self.port

    def encode(self) -> bytes:
        endpoints = self.endpoints or (("PLAINTEXT", "PLAINTEXT", self.host, self.port),)
        doc: dict[str, Any] = {
            "version": 5,
            "host": self.host,
            "port": self.port,
            "endpoints": [f"{name}://{host}:{port}" for name, _, host, port in endpoints],
            "listener_security_protocol_map": {name: proto for name, proto, _, _ in endpoints},
            "jmx_port": -1,
            "features": {},
            "timestamp": str(int(time.time() * 1000)),
        }
        if self.rack is not None:
            doc["rack"] = self.rack
        return _dumps(doc)

    @classmethod
    def decode(cls, broker_id: int, raw: bytes) -> BrokerInfo:
        doc = json.loads(raw)
        host, port = doc.get("host"), doc.get("port", -1)
        protocols = doc.get("listener_security_protocol_map") or {}
        endpoints = []
        for endpoint in doc.get("endpoints", []):
            name, _, address = endpoint.partition("://")
            e_host, _, port_text = address.rpartition(":")
            endpoints.append((name, protocols.get(name, name), e_host, int(port_text)))
            if name == "PLAINTEXT" and (host is None or port in (None, -1)):
                host, port = e_host, int(port_text)
        return cls(broker_id, str(host), int(port), doc.get("rack"), tuple(endpoints))


def encode_controller(broker_id: int) -> bytes:
    return _dumps({"version": 1, "brokerid": broker_id, "timestamp": str(int(time.time() * 1000))})


def decode_controller(raw: bytes | None) -> int:
    if not raw:
        return -1
    return int(json.loads(raw)["brokerid"])


def encode_topic_id(topic_id: uuid.UUID) -> str:
    """Kafka's Uuid text form: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")


def decode_topic_id(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


@dataclass(frozen=True)
class TopicAssignment:
    """A topic's id and the ordered replica list of each partition (first = preferred leader).

    ``adding``/``removing`` are non-empty only while a reassignment of that partition runs
    (KIP-455's layout): the replica list is then the union of old and new replicas.
    """

    topic_id: uuid.UUID
    partitions: dict[int, tuple[int, ...]]
    adding: dict[int, tuple[int, ...]] = field(default_factory=dict)
    removing: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def encode(self) -> bytes:
        return _dumps(
            {
                "version": 3,
                "topic_id": encode_topic_id(self.topic_id),
                "partitions": {str(p): list(r) for p, r in sorted(self.partitions.items())},
                "adding_replicas": {str(p): list(r) for p, r in sorted(self.adding.items())},
                "removing_replicas": {str(p): list(r) for p, r in sorted(self.removing.items())},
            }
        )

    @classmethod
    def decode(cls, raw: bytes) -> TopicAssignment:
        doc = json.loads(raw)

        def table(key: str) -> dict[int, tuple[int, ...]]:
            return {int(p): tuple(int(b) for b in r) for p, r in (doc.get(key) or {}).items()}

        topic_id = doc.get("topic_id")
        return cls(
            decode_topic_id(topic_id) if topic_id else uuid.UUID(int=0),
            table("partitions"),
            table("adding_replicas"),
            table("removing_replicas"),
        )


@dataclass(frozen=True)
class PartitionState:
    """Leader, leader epoch and ISR of one partition, plus the znode version it was read at."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    zk_version: int = -1

    def encode(self) -> bytes:
        return _dumps(
            {
                "version": 1,
                "controller_epoch": self.controller_epoch,
                "leader": self.leader,
                "leader_epoch": self.leader_epoch,
                "isr": list(self.isr),
            }
        )

    @classmethod
    def decode(cls, raw: bytes, zk_version: int) -> PartitionState:
        doc = json.loads(raw)
        return cls(
            int(doc["leader"]),
            int(doc["leader_epoch"]),
            tuple(int(b) for b in doc["isr"]),
            int(doc["controller_epoch"]),
            zk_version,
        )


def encode_topic_config(config: dict[str, str]) -> bytes:
    return _dumps({"version": 1, "config": config})


def decode_topic_config(raw: bytes | None) -> dict[str, str]:
    if not raw:
        return {}
    return {str(k): str(v) for k, v in (json.loads(raw).get("config") or {}).items()}


def encode_partitions(entries: list[tuple[str, int]]) -> bytes:
    return _dumps({"version": 1, "partitions": [{"topic": t, "partition": p} for t, p in entries]})


def decode_partitions(raw: bytes | None) -> list[tuple[str, int]]:
    if not raw:
        return []
    return [(e["topic"], int(e["partition"])) for e in json.loads(raw).get("partitions", [])]
