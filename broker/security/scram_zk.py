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
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from broker.security.scram import (
    MECHANISMS,
    ScramCredential,
    UserCredentials,
    decode_user,
)

if TYPE_CHECKING:
    from kazoo.client import KazooClient

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
        self._seen: set[str] = set()  # users whose data watch has fired at least once

    async def start(self) -> None:
        """Follows the users from now on, and holds the ones that exist now before returning:
        the listeners open after this, and a login there (a peer's, the hub's) must not race
        the watches, which fill in on the loop a moment later."""
        await self._zk.watch_children(USERS, self._on_users)
        for user, creds in (await self._zk.run(read_users)).items():
            if user not in self._seen:  # a watch already delivered something newer
                self._users[user] = creds

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
            self._seen.add(user)
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
        """Writes to ZooKeeper (see ``alter_users``); the result is visible at once here, the
        watches update the other brokers."""
        for user, creds in alter_users(self._zk.kazoo, upserts, deletes).items():
            if creds:
                self._users[user] = creds
            else:
                self._users.pop(user, None)


def read_users(kazoo: KazooClient) -> UserCredentials:
    """Every user's credentials, read straight from ZooKeeper."""
    out: UserCredentials = {}
    for child in kazoo.get_children(USERS) if kazoo.exists(USERS) else []:
        try:
            raw, _ = kazoo.get(f"{USERS}/{child}")
        except NoNodeError:
            continue
        creds = decode_user(raw)
        if creds:
            out[unquote(child)] = creds
    return out


def alter_users(
    kazoo: KazooClient,
    upserts: dict[tuple[str, str], ScramCredential],
    deletes: set[tuple[str, str]],
) -> UserCredentials:
    """Read-modify-write of each user's znode (compare-and-set on its version); returns each
    changed user's credentials as stored now (empty: the user is gone). Works on a bare kazoo
    client, so ``sluice up --brokers N`` can store the hub's login before any broker runs."""
    changed: UserCredentials = {}
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
        changed[user] = {
            m: ScramCredential.from_text(t) for m, t in config.items() if m in MECHANISMS
        }
    return changed
