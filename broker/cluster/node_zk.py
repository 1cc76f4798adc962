"""Blocking ZooKeeper reads of ``ClusterNode`` (run in the ZooKeeper executor)."""

from __future__ import annotations

import base64
import json
import uuid

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from broker.cluster import znodes
from broker.cluster.znodes import BrokerInfo, TopicAssignment


def init_paths(zk: KazooClient, local_cluster_id: str) -> tuple[str, bool]:
    """Creates the persistent paths; returns (/cluster/id, whether this call created it)."""
    for path in znodes.PERSISTENT_PATHS:
        zk.ensure_path(path)
    created = False
    try:
        raw, _ = zk.get(znodes.CLUSTER_ID)
    except NoNodeError:
        new = local_cluster_id or base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        try:
            doc = json.dumps({"version": "1", "id": new}).encode()
            zk.create(znodes.CLUSTER_ID, doc, makepath=True)
            created = True
        except NodeExistsError:
            pass
        raw, _ = zk.get(znodes.CLUSTER_ID)
    return str(json.loads(raw)["id"]), created


def read_topics(zk: KazooClient) -> tuple[dict[str, TopicAssignment], dict[str, dict[str, str]]]:
    topics: dict[str, TopicAssignment] = {}
    configs: dict[str, dict[str, str]] = {}
    for name in zk.get_children(znodes.TOPICS):
        try:
            raw, _ = zk.get(znodes.topic_path(name))
        except NoNodeError:
            continue
        topics[name] = TopicAssignment.decode(raw)
        try:
            raw, _ = zk.get(znodes.topic_config_path(name))
            configs[name] = znodes.decode_topic_config(raw)
        except NoNodeError:
            configs[name] = {}
    return topics, configs


def read_brokers(zk: KazooClient, ids: list[int]) -> dict[int, BrokerInfo]:
    out = {}
    for broker_id in ids:
        try:
            raw, _ = zk.get(znodes.broker_path(broker_id))
        except NoNodeError:
            continue
        out[broker_id] = BrokerInfo.decode(broker_id, raw)
    return out


def ephemeral_owner(zk: KazooClient, path: str) -> int:
    stat = zk.exists(path)
    return int(stat.ephemeralOwner) if stat is not None else -1
