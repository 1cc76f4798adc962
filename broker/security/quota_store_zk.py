"""Cluster mode: client quotas in ZooKeeper, in Kafka's layout, shared through a watch.

::

    /config/users/<user>                       {"version":1,"config":{"producer_byte_rate":"1024"}}
    /config/users/<user>/clients/<client-id>   (same)
    /config/clients/<client-id>                (same)
    /config/changes/config_change_<seq>        {"version":2,"entity_path":"users/alice"}

``<default>`` is the default entity's name, as in Kafka. A user's node also holds its SCRAM
credentials (``scram_zk``); each side reads and rewrites only its own keys. A write changes
one entity's node (read and written with the node's version, so concurrent changes on two
brokers both land), then adds a change
node; every broker watches ``/config/changes`` and reloads all quotas when it changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError, NotEmptyError

from broker.security.quota import CLIENT_ID, DEFAULT, QUOTA_KEYS, USER, Entity, Name

if TYPE_CHECKING:
    from kazoo.client import KazooClient

    from broker.cluster.zk_client import ZkClient

log = logging.getLogger(__name__)

USERS = "/config/users"
CLIENTS = "/config/clients"
CHANGES = "/config/changes"
_DEFAULT = "<default>"
_KEEP_CHANGES = 100

Configs = dict[Entity, dict[str, float]]


def _name(name: Name) -> str:
    return _DEFAULT if name is DEFAULT else quote(str(name), safe="")


def _unname(text: str) -> Name:
    return DEFAULT if text == _DEFAULT else unquote(text)


def entity_path(target: Entity) -> str:
    parts = dict(target)
    if USER in parts and CLIENT_ID in parts:
        return f"users/{_name(parts[USER])}/clients/{_name(parts[CLIENT_ID])}"
    if USER in parts:
        return f"users/{_name(parts[USER])}"
    return f"clients/{_name(parts[CLIENT_ID])}"


def _config(zk: KazooClient, path: str) -> dict[str, float]:
    try:
        raw, _ = zk.get(path)
    except NoNodeError:
        return {}
    if not raw:
        return {}
    # A user's node also holds its SCRAM credentials (Kafka's layout): only quotas are ours.
    config = json.loads(raw).get("config", {})
    return {k: float(v) for k, v in config.items() if k in QUOTA_KEYS}


def read_all(zk: KazooClient) -> Configs:
    out: Configs = {}
    for user in zk.get_children(USERS) if zk.exists(USERS) else []:
        u = _unname(user)
        if config := _config(zk, f"{USERS}/{user}"):
            out[((USER, u),)] = config
        clients = f"{USERS}/{user}/clients"
        for client in zk.get_children(clients) if zk.exists(clients) else []:
            if config := _config(zk, f"{clients}/{client}"):
                out[((CLIENT_ID, _unname(client)), (USER, u))] = config
    for client in zk.get_children(CLIENTS) if zk.exists(CLIENTS) else []:
        if config := _config(zk, f"{CLIENTS}/{client}"):
            out[((CLIENT_ID, _unname(client)),)] = config
    return out


def alter(zk: KazooClient, target: Entity, ops: Iterable[tuple[str, float, bool]]) -> None:
    """Applies set/remove ops to one entity's node (versioned), then announces the change."""
    ops = list(ops)
    path = "/config/" + entity_path(target)
    while True:
        try:
            raw, stat = zk.get(path)
            doc = json.loads(raw) if raw else {}
            config, version = dict(doc.get("config", {})), stat.version
        except NoNodeError:
            config, version = {}, -1
        for key, value, remove in ops:
            if remove:
                config.pop(key, None)
            else:
                config[key] = repr(float(value))
        data = json.dumps({"version": 1, "config": config}).encode()
        try:
            if version < 0:
                zk.create(path, data, makepath=True)
            else:
                zk.set(path, data, version=version)
            break
        except (BadVersionError, NodeExistsError, NoNodeError, NotEmptyError):
            continue
    zk.ensure_path(CHANGES)
    note = json.dumps({"version": 2, "entity_path": entity_path(target)}).encode()
    zk.create(f"{CHANGES}/config_change_", note, sequence=True)
    for old in sorted(zk.get_children(CHANGES))[:-_KEEP_CHANGES]:
        with contextlib.suppress(NoNodeError):
            zk.delete(f"{CHANGES}/{old}")


class ZkQuotaStore:
    """The cluster's client quotas in ZooKeeper; ``watch`` hands each reload to ``on_load``."""

    def __init__(self, zk: ZkClient) -> None:
        self.zk = zk
        self._reloads: set[asyncio.Task[None]] = set()

    async def load(self) -> Configs:
        return await self.zk.run(read_all)

    async def alter(self, target: Entity, ops: list[tuple[str, float, bool]]) -> None:
        await self.zk.run(alter, target, ops)

    async def watch(self, on_load: Callable[[Configs], None]) -> None:
        async def reload() -> None:
            try:
                on_load(await self.load())
            except Exception:
                log.exception("cannot reload client quotas from ZooKeeper; keeping the old set")

        def changed(_children: list[str]) -> None:
            task = asyncio.get_running_loop().create_task(reload())
            self._reloads.add(task)
            task.add_done_callback(self._reloads.discard)

        await self.zk.watch_children(CHANGES, changed)
