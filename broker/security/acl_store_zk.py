"""Cluster mode: ACLs in ZooKeeper, in Kafka's ZooKeeper-era layout, shared through a watch.

::

    /kafka-acl/<ResourceType>/<name>                        LITERAL patterns
    /kafka-acl-extended/prefixed/<ResourceType>/<name>      PREFIXED patterns
        {"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow",
                              "operation":"Read","host":"*"}]}
    /kafka-acl-changes/acl_changes_<seq>                    a change happened (any pattern)

Writers change one resource node at a time with the node's ZooKeeper version (read, merge,
write with ``version``; BadVersion or NodeExists means another broker won the race, so read
again), as Kafka's ``AclAuthorizer`` does, then add a sequential change node. Every broker
watches ``/kafka-acl-changes`` and reloads the whole set when it changes, so an ACL created on
one broker is enforced by all of them a watch round trip later. Change nodes older than the
last 100 are deleted by the writer. Kafka writes resource names in the change nodes so readers
reload one resource; reloading everything is simpler and ACL changes are rare.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError, NotEmptyError

from broker.security.acl import (
    AclBinding,
    AclOperation,
    PatternType,
    PermissionType,
    ResourceType,
)

if TYPE_CHECKING:
    from kazoo.client import KazooClient

    from broker.cluster.zk_client import ZkClient

log = logging.getLogger(__name__)

LITERAL_ROOT = "/kafka-acl"
PREFIXED_ROOT = "/kafka-acl-extended/prefixed"
CHANGES = "/kafka-acl-changes"
_KEEP_CHANGES = 100

# Kafka's names in these nodes: CamelCase ("Topic", "Read", "Allow").
_TYPE_NAMES = {t: t.name.title().replace("_", "") for t in ResourceType if t > 1}
_TYPE_NAMES[ResourceType.TRANSACTIONAL_ID] = "TransactionalId"
_TYPE_NAMES[ResourceType.DELEGATION_TOKEN] = "DelegationToken"
_TYPES_BY_NAME = {v: k for k, v in _TYPE_NAMES.items()}
_OP_NAMES = {o: "".join(w.title() for w in o.name.split("_")) for o in AclOperation if o > 1}
_OPS_BY_NAME = {v: k for k, v in _OP_NAMES.items()}


def _path(rtype: ResourceType, pattern: PatternType, name: str) -> str:
    root = PREFIXED_ROOT if pattern == PatternType.PREFIXED else LITERAL_ROOT
    return f"{root}/{_TYPE_NAMES[rtype]}/{name}"


def _entry(acl: AclBinding) -> dict[str, Any]:
    return {
        "principal": acl.principal,
        "permissionType": acl.permission.name.title(),
        "operation": _OP_NAMES[acl.operation],
        "host": acl.host,
    }


def _decode(raw: bytes, rtype: ResourceType, pattern: PatternType, name: str) -> list[AclBinding]:
    out = []
    for e in json.loads(raw)["acls"]:
        operation = _OPS_BY_NAME[e["operation"]]
        permission = PermissionType[e["permissionType"].upper()]
        out.append(
            AclBinding(rtype, name, pattern, e["principal"], e["host"], operation, permission)
        )
    return out


def read_all(zk: KazooClient) -> list[AclBinding]:
    """Every ACL under both roots."""
    out: list[AclBinding] = []
    for root, pattern in (
        (LITERAL_ROOT, PatternType.LITERAL),
        (PREFIXED_ROOT, PatternType.PREFIXED),
    ):
        for type_name in zk.get_children(root) if zk.exists(root) else []:
            rtype = _TYPES_BY_NAME.get(type_name)
            if rtype is None:
                continue
            for name in zk.get_children(f"{root}/{type_name}"):
                try:
                    raw, _ = zk.get(f"{root}/{type_name}/{name}")
                except NoNodeError:
                    continue
                out += _decode(raw, rtype, pattern, name)
    return out


def apply(zk: KazooClient, adds: list[AclBinding], removes: list[AclBinding]) -> None:
    """Adds and removes ACLs, one versioned read-merge-write per resource; then notifies."""
    resources: dict[tuple[ResourceType, PatternType, str], None] = {}
    for acl in [*adds, *removes]:
        resources[(acl.resource_type, acl.pattern_type, acl.resource_name)] = None
    for rtype, pattern, name in resources:
        path = _path(rtype, pattern, name)
        mine = [a for a in adds if (a.resource_type, a.pattern_type, a.resource_name)
                == (rtype, pattern, name)]  # fmt: skip
        gone = set(removes)
        while True:
            try:
                raw, stat = zk.get(path)
                current, version = _decode(raw, rtype, pattern, name), stat.version
            except NoNodeError:
                current, version = [], -1
            wanted = [a for a in dict.fromkeys([*current, *mine]) if a not in gone]
            doc = json.dumps({"version": 1, "acls": [_entry(a) for a in wanted]}).encode()
            try:
                if version < 0 and wanted:
                    zk.create(path, doc, makepath=True)
                elif version >= 0 and not wanted:
                    zk.delete(path, version=version)
                elif version >= 0:
                    zk.set(path, doc, version=version)
                break
            except (BadVersionError, NodeExistsError, NoNodeError, NotEmptyError):
                continue  # another broker changed it meanwhile: merge again
    zk.ensure_path(CHANGES)
    zk.create(f"{CHANGES}/acl_changes_", b"", sequence=True)
    changes = sorted(zk.get_children(CHANGES))
    for old in changes[:-_KEEP_CHANGES]:
        with contextlib.suppress(NoNodeError):
            zk.delete(f"{CHANGES}/{old}")


class ZkAclStore:
    """The cluster's ACLs in ZooKeeper; ``watch`` hands every new full set to ``on_load``."""

    def __init__(self, zk: ZkClient) -> None:
        self.zk = zk
        self._reloads: set[asyncio.Task[None]] = set()

    async def load(self) -> list[AclBinding]:
        return await self.zk.run(read_all)

    async def apply(
        self, adds: list[AclBinding], removes: list[AclBinding], everything: list[AclBinding]
    ) -> None:
        await self.zk.run(apply, adds, removes)

    async def watch(self, on_load: Callable[[list[AclBinding]], None]) -> None:
        """Reloads on every change notification (and once now); ``on_load`` runs on the loop."""

        async def reload() -> None:
            try:
                on_load(await self.load())
            except Exception:
                log.exception("cannot reload ACLs from ZooKeeper; keeping the previous set")

        def changed(_children: list[str]) -> None:
            task = asyncio.get_running_loop().create_task(reload())
            self._reloads.add(task)
            task.add_done_callback(self._reloads.discard)

        await self.zk.watch_children(CHANGES, changed)
