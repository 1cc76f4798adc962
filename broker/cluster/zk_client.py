"""kazoo on an asyncio broker: blocking calls off the loop, watch callbacks onto it.

kazoo runs its own threads (a connection thread and a callback thread). The broker's event loop
must never wait on ZooKeeper, so every call goes through :meth:`ZkClient.call`, which runs it in
a small dedicated thread pool and awaits the result; and every watch callback is re-posted to
the loop with ``call_soon_threadsafe``, so all cluster state is read and changed on the loop
thread only (no locks). kazoo delivers the watch callbacks of one client in order from its one
callback thread, and ``call_soon_threadsafe`` keeps that order.

Sessions: kazoo reconnects by itself. When a session is *lost* (expired: ephemeral nodes are
gone) and a new one is established, :attr:`on_new_session` runs on the loop so the broker can
register again and stand for controller again. kazoo's ``DataWatch``/``ChildrenWatch`` recipes
re-arm themselves after reconnecting.

Chroot: ``host:port/chroot`` works as in Kafka; the chroot node is created if missing (with a
client without the chroot), as Kafka's ``createChrootIfNecessary`` does.

Authentication: with ``BrokerConfig.zookeeper_digest`` both clients log in with ZooKeeper's
``digest`` scheme and create every node (the chroot too) with a digest ACL granting that
identity everything and no one else anything (``digest_auth``). kazoo logs the request that
carries ``user:password`` at DEBUG (below the WARNING set here); ``_HideAuth`` drops that line
even when someone lowers the level.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from kazoo.client import KazooClient, KazooState
from kazoo.protocol.serialization import Auth
from kazoo.protocol.states import ZnodeStat
from kazoo.retry import KazooRetry
from kazoo.security import make_digest_acl

if TYPE_CHECKING:
    from broker.config import ZkDigest

log = logging.getLogger(__name__)
# kazoo logs every connect/close at INFO; our own lines say what matters (quiet by default).
logging.getLogger("kazoo.client").setLevel(logging.WARNING)

T = TypeVar("T")


class _HideAuth(logging.Filter):
    """Drops kazoo's "Sending request: Auth(..., auth='user:password')" debug line."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        return not any(isinstance(arg, Auth) for arg in args)


# A client's connection logs through the client's logger ("kazoo.client" by default).
for _name in ("kazoo.client", "kazoo.protocol.connection"):
    _logger = logging.getLogger(_name)
    if not any(isinstance(f, _HideAuth) for f in _logger.filters):
        _logger.addFilter(_HideAuth())


def digest_auth(digest: ZkDigest | None) -> dict[str, Any]:
    """``KazooClient`` keyword arguments that log in as ``digest`` and make every node created
    readable, writable and administrable by that identity only; ``{}`` for None."""
    if digest is None:
        return {}
    return {
        "auth_data": [("digest", f"{digest.username}:{digest.password}")],
        "default_acl": [make_digest_acl(digest.username, digest.password, all=True)],
    }


def split_connect(connect: str) -> tuple[str, str]:
    """``"h1:1,h2:2/kafka"`` -> (``"h1:1,h2:2"``, ``"/kafka"``); chroot ``""`` if none."""
    hosts, slash, chroot = connect.partition("/")
    return hosts, (slash + chroot).rstrip("/")


class ZkClient:
    """One ZooKeeper session of this broker; see the module docstring."""

    def __init__(
        self,
        connect: str,
        session_timeout_ms: int,
        loop: asyncio.AbstractEventLoop,
        connection_timeout_ms: int | None = None,
        digest: ZkDigest | None = None,
    ) -> None:
        self.connect = connect
        self.hosts, self.chroot = split_connect(connect)
        self._loop = loop
        self._session_timeout_s = session_timeout_ms / 1000
        self._connect_timeout_s = (connection_timeout_ms or session_timeout_ms) / 1000
        self._pool = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="zk-call")
        self._auth = digest_auth(digest)
        self.kazoo = KazooClient(
            hosts=self.hosts + self.chroot,
            timeout=self._session_timeout_s,
            connection_retry=KazooRetry(max_tries=-1, max_delay=1.0),
            command_retry=KazooRetry(max_tries=3, max_delay=1.0),
            **self._auth,
        )
        self.on_new_session: Callable[[], None] | None = None
        self.on_disconnect: Callable[[], None] | None = None
        self._lost = False
        self._closing = False
        self._cancelled: set[str] = set()
        self.kazoo.add_listener(self._state_changed)

    async def start(self) -> None:
        """Connects (creating the chroot if needed); raises if ZooKeeper does not answer."""
        if self.chroot:
            await self._run(self._ensure_chroot)
        await self._run(functools.partial(self.kazoo.start, timeout=self._connect_timeout_s))

    def _ensure_chroot(self) -> None:
        bare = KazooClient(hosts=self.hosts, timeout=self._session_timeout_s, **self._auth)
        bare.start(timeout=self._connect_timeout_s)
        try:
            bare.ensure_path(self.chroot)
        finally:
            bare.stop()
            bare.close()

    async def stop(self) -> None:
        """Closes the session: this broker's ephemeral nodes disappear at once."""
        self._closing = True
        try:
            await self._run(self.kazoo.stop)
            await self._run(self.kazoo.close)
        finally:
            self._pool.shutdown(wait=False)

    async def _run(self, fn: Callable[[], T]) -> T:
        return await self._loop.run_in_executor(self._pool, fn)

    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``await zk.call("get", path)`` = ``kazoo.get(path)`` off the loop."""
        return await self._run(functools.partial(getattr(self.kazoo, method), *args, **kwargs))

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Runs ``fn(kazoo, *args)`` off the loop (several ZooKeeper calls in one hop)."""
        return await self._run(functools.partial(fn, self.kazoo, *args))

    # ------------------------------------------------------------------ watches

    def post(self, fn: Callable[..., Any], *args: Any) -> None:
        """Schedules ``fn(*args)`` on the loop (safe from kazoo's threads)."""
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(fn, *args)

    async def watch_data(
        self, path: str, handler: Callable[[bytes | None, ZnodeStat | None], bool | None]
    ) -> None:
        """Calls ``handler(data, stat)`` on the loop now and on every change of ``path``.

        ``data`` is None while the node does not exist. The watch stays armed until
        :meth:`unwatch` (kazoo recipes cannot be cancelled otherwise), so a deleted and
        re-created node keeps being followed.
        """

        def relay(data: bytes | None, stat: ZnodeStat | None) -> bool:
            if path in self._cancelled:
                self._cancelled.discard(path)
                return False
            self.post(handler, data, stat)
            return True

        self._cancelled.discard(path)
        await self._run(functools.partial(self.kazoo.DataWatch, path, relay))

    def unwatch(self, path: str) -> None:
        """Stops a :meth:`watch_data` after its next event (kazoo's only way to stop one)."""
        self._cancelled.add(path)

    async def watch_children(self, path: str, handler: Callable[[list[str]], None]) -> None:
        """Calls ``handler(children)`` on the loop now and whenever the child list changes."""
        await self._run(functools.partial(self.kazoo.ensure_path, path))

        def relay(children: list[str]) -> None:
            self.post(handler, list(children))

        await self._run(functools.partial(self.kazoo.ChildrenWatch, path, relay))

    # ------------------------------------------------------------------ session

    def _state_changed(self, state: str) -> None:
        # Runs on a kazoo thread: only flip flags and post to the loop.
        if self._closing:
            return
        if state == KazooState.LOST:
            self._lost = True
            log.warning("ZooKeeper session lost", extra={"zookeeper": self.connect})
            if self.on_disconnect is not None:
                self.post(self.on_disconnect)
        elif state == KazooState.SUSPENDED:
            log.warning("ZooKeeper connection suspended", extra={"zookeeper": self.connect})
        elif state == KazooState.CONNECTED and self._lost:
            self._lost = False
            log.info("ZooKeeper session re-established", extra={"zookeeper": self.connect})
            if self.on_new_session is not None:
                self.post(self.on_new_session)

    @property
    def connected(self) -> bool:
        return bool(self.kazoo.connected)
