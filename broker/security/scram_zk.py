"""Cluster mode's SCRAM store: ``/config/users/<user>`` in ZooKeeper, shared by every broker.

Layout as Kafka's: the user name URL-encoded as the znode name, the document
``{"version":1,"config":{"SCRAM-SHA-256":"salt=...,stored_key=...,..."}}``. Other keys of a
user's ``config`` (Kafka keeps user quotas in the same znode) are preserved on every write.

Each broker watches the user list and each user's znode, and keeps the credentials in memory,
so an authentication reads no ZooKeeper; a user created through any broker can log in on all
of them once the watch fires (milliseconds). Writes go straight to ZooKeeper (``alter`` runs
off the event loop, called by the AlterUserScramCredentials handler).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any
from urllib.parse import quote, unquote

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from broker.security.scram import (
    MECHANISMS,
    ScramCredential,
    UserCredentials,
    decode_user,
)

log = logging.getLogger(__name__)

USERS = "/config/users"


def user_path(user: str) -> str:
    return f"{USERS}/{quote(user, safe='')}"


class ZkScramStore:
    """``ScramStore`` over ZooKeeper (``broker.cluster.zk_client.ZkClient``)."""

    def __init__(self, zk: Any) -> None:
        self._zk = zk
        self._users: UserCredentials = {}
        self._watched: set[str] = set()

    async def start(self) -> None:
        await self._zk.watch_children(USERS, self._on_users)

    def _on_users(self, children: list[str]) -> None:
        for child in children:
            user = unquote(child)
            if user not in self._watched:
                self._watched.add(user)
                self._zk.post(self._spawn_watch, user)
        for gone in set(self._users) - {unquote(c) for c in children}:
            self._users.pop(gone, None)

    def _spawn_watch(self, user: str) -> None:
        def on_data(data: bytes | None, _stat: object) -> None:
            creds = decode_user(data)
            if creds:
                self._users[user] = creds
            else:
                self._users.pop(user, None)

        asyncio.get_running_loop().create_task(self._zk.watch_data(user_path(user), on_data))

    def get(self, user: str, mechanism: str) -> ScramCredential | None:
        return self._users.get(user, {}).get(mechanism)

    def users(self) -> UserCredentials:
        return {u: dict(c) for u, c in self._users.items()}

    def alter(
        self, upserts: dict[tuple[str, str], ScramCredential], deletes: set[tuple[str, str]]
    ) -> None:
        """Read-modify-write of each user's znode (compare-and-set on its version)."""
        kazoo = self._zk.kazoo
        for user in {u for u, _ in upserts} | {u for u, _ in deletes}:
            path = user_path(user)
            while True:
                try:
                    raw, stat = kazoo.get(path)
                    version: int | None = stat.version
                except NoNodeError:
                    raw, version = None, None
                doc: dict[str, Any] = json.loads(raw) if raw else {"version": 1}
                config: dict[str, str] = doc.setdefault("config", {})
                for (u, mechanism), cred in upserts.items():
                    if u == user:
                        config[mechanism] = cred.to_text()
                for u, mechanism in deletes:
                    if u == user:
                        config.pop(mechanism, None)
                data = json.dumps(doc, separators=(",", ":")).encode()
                try:
                    if version is None:
                        kazoo.create(path, data, makepath=True)
                    elif not config:
                        kazoo.delete(path, version=version)
                    else:
                        kazoo.set(path, data, version=version)
                    break
                except (BadVersionError, NodeExistsError, NoNodeError):
                    continue  # another broker wrote meanwhile: read again
            creds = {m: ScramCredential.from_text(t) for m, t in config.items() if m in MECHANISMS}
            if creds:
                self._users[user] = creds  # visible at once here; watches update the others
            else:
                self._users.pop(user, None)
