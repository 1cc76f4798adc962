"""Segment file descriptors, opened on demand and kept in one bounded LRU cache per process.

Why: a broker that keeps one descriptor per segment runs out of them (``EMFILE``) long before
it runs out of disk: 1,000 partitions need 1,000 descriptors before a single client connects,
and a common default soft limit is 1,024. Here every segment's ``.log`` is a ``SegmentFile``
whose descriptor is opened when a read or write needs it and closed when the cache needs room,
least recently used first, so the number of partitions is limited by disk, not descriptors.
Hot partitions (their active segments are appended to and read all the time) stay at the
young end of the LRU and stay open; a cold one costs an ``open`` on its next use. The limit
is one per process because ``RLIMIT_NOFILE`` is: ``configure`` sets it from that limit.

Descriptor safety, the invariant this module exists to keep: a descriptor number is never
used after it was closed (the OS would by then have given the number to another file, and a
``pread`` would silently read the wrong data). Every use is bracketed by ``acquire`` and
``release``, which count users under the cache lock; eviction only closes descriptors with no
users. Opening again checks the file's identity (device, inode) against the first open, so a
path that now names a different file (the cleaner swapped a segment in) is refused instead of
read.

Retired files: a segment deleted by retention or replaced by the cleaner is *retired*. Its
descriptor, if open, leaves the LRU and stays open until the ``Segment`` object is garbage
collected (a reader that took a snapshot of the segments before the deletion finishes reading
the unlinked inode, as before this cache existed); it is never opened again, and a reader that
needs it then gets ``SegmentGoneError`` (a retriable ``KAFKA_STORAGE_ERROR``: its retry sees
the new segment list).

Running out anyway (sockets also use descriptors): an ``open`` that fails with
``EMFILE``/``ENFILE`` closes idle cached descriptors and tries once more; if that fails too the
caller gets a ``StorageError`` naming the limit, which the request that hit it returns as
``KAFKA_STORAGE_ERROR``. Nothing else is affected.

Thread safety: one lock per cache, held for the bookkeeping and for ``open``/``close`` calls
(microseconds); reads and writes through an acquired descriptor run without it. Garbage
collection may run a Segment's finalizer while the same thread holds the lock, so finalizers
never wait for it (``SegmentFile.finalize``).
"""

from __future__ import annotations

import errno
import logging
import os
import resource
import threading
from collections import OrderedDict, deque
from pathlib import Path

from broker.errors import SegmentGoneError as SegmentGoneError
from broker.errors import StorageError

log = logging.getLogger(__name__)

MIN_CAPACITY = 16
_FLAGS = os.O_RDWR | os.O_APPEND
_EXHAUSTED = (errno.EMFILE, errno.ENFILE)


class SegmentFile:
    """One segment ``.log`` file; see the module docstring for the rules."""

    __slots__ = ("_cache", "_discard", "_fd", "_identity", "_refs", "_retired", "path")

    def __init__(self, cache: FileHandleCache, path: Path) -> None:
        self._cache = cache
        self.path = path
        self._fd: int | None = None
        self._refs = 0
        self._retired = False
        self._discard = False
        self._identity: tuple[int, int] | None = None

    def acquire(self) -> int:
        """An open descriptor, valid until the matching ``release``."""
        cache = self._cache
        with cache._lock:
            fd = self._fd
            if fd is None:
                return cache._open_locked(self)
            self._refs += 1
            if not self._retired:
                cache._lru.move_to_end(self)
            return fd

    def release(self) -> None:
        cache = self._cache
        with cache._lock:
            self._refs -= 1
            if self._refs == 0:
                if self._discard:
                    cache._close_locked(self)
                elif len(cache._lru) > cache.capacity:
                    cache._trim_locked(cache.capacity)

    def retire(self) -> None:
        """No more opens: the file was deleted or replaced. An open descriptor stays for the
        readers that still hold the segment, until ``discard`` (the segment's finalizer)."""
        cache = self._cache
        with cache._lock:
            self._retired = True
            cache._lru.pop(self, None)

    def discard(self) -> None:
        """Retires and closes now if nobody uses the descriptor (else at the last release)."""
        with self._cache._lock:
            self._cache._discard_locked(self)

    def finalize(self) -> None:
        """``discard`` for the owner's garbage-collection finalizer, which may run inside any
        allocation, even one made while this thread holds the cache lock: it must not block.
        It queues the handle and reaps the queue only if the lock is free right now; otherwise
        the next cache operation does."""
        cache = self._cache
        cache._graveyard.append(self)
        if cache._lock.acquire(blocking=False):
            try:
                cache._reap_locked()
            finally:
                cache._lock.release()

    @property
    def is_open(self) -> bool:
        return self._fd is not None

    def __repr__(self) -> str:
        return f"SegmentFile({self.path.name}, fd={self._fd}, refs={self._refs})"


class FileHandleCache:
    """At most ``capacity`` idle descriptors stay open; more only while in use."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(MIN_CAPACITY, capacity)
        self._lock = threading.Lock()
        self._lru: OrderedDict[SegmentFile, None] = OrderedDict()
        self._graveyard: deque[SegmentFile] = deque()  # finalized handles not yet closed
        self.opens = 0  # descriptors opened so far (a cold-partition cost, for tests/metrics)
        self.evictions = 0

    def file(self, path: Path) -> SegmentFile:
        """A handle for ``path``, not yet open; its first ``acquire`` creates a missing file,
        later ones refuse to (a file that vanished was deleted, not never made)."""
        return SegmentFile(self, path)

    @property
    def open_count(self) -> int:
        """Descriptors in the LRU (retired ones still held by readers are not counted)."""
        return len(self._lru)

    def resize(self, capacity: int) -> None:
        with self._lock:
            self.capacity = max(MIN_CAPACITY, capacity)
            self._trim_locked(self.capacity)

    def _discard_locked(self, handle: SegmentFile) -> None:
        handle._retired = handle._discard = True
        self._lru.pop(handle, None)
        if handle._fd is not None and handle._refs == 0:
            self._close_locked(handle)

    def _reap_locked(self) -> None:
        graveyard = self._graveyard
        while graveyard:
            self._discard_locked(graveyard.popleft())

    def _open_locked(self, handle: SegmentFile) -> int:
        if self._graveyard:
            self._reap_locked()
        if handle._retired:
            raise SegmentGoneError(f"segment {handle.path.name} was deleted or replaced")
        self._trim_locked(self.capacity - 1)
        flags = _FLAGS if handle._identity is not None else _FLAGS | os.O_CREAT
        try:
            fd = os.open(handle.path, flags, 0o644)
        except OSError as exc:
            if exc.errno not in _EXHAUSTED:
                raise _open_error(handle, exc) from exc
            self._trim_locked(len(self._lru) // 2)  # make room for sockets too
            try:
                fd = os.open(handle.path, flags, 0o644)
            except OSError as again:
                raise _open_error(handle, again) from again
        stat = os.fstat(fd)
        identity = (stat.st_dev, stat.st_ino)
        if handle._identity is None:
            handle._identity = identity
        elif identity != handle._identity:
            os.close(fd)
            handle._retired = True
            raise SegmentGoneError(f"segment {handle.path.name} was replaced")
        handle._fd = fd
        handle._refs += 1
        self._lru[handle] = None
        self.opens += 1
        return fd

    def _trim_locked(self, target: int) -> None:
        """Closes idle descriptors, oldest first, until at most ``target`` remain (or only
        ones in use do)."""
        if len(self._lru) <= target:
            return
        for handle in list(self._lru):
            if len(self._lru) <= target:
                return
            if handle._refs == 0 and self._lru.pop(handle, 0) is None:
                self._close_locked(handle)
                self.evictions += 1

    def _close_locked(self, handle: SegmentFile) -> None:
        fd, handle._fd = handle._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError as exc:  # pragma: no cover - close of a valid fd does not fail
                log.warning("closing %s failed: %s", handle.path, exc)


def _open_error(handle: SegmentFile, exc: OSError) -> StorageError:
    if exc.errno in _EXHAUSTED:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        return StorageError(
            f"too many open files (limit {soft}): cannot open {handle.path}; raise the "
            "limit (ulimit -n / LimitNOFILE) or lower max.connections"
        )
    if exc.errno == errno.ENOENT:
        return SegmentGoneError(f"segment {handle.path} no longer exists")
    return StorageError(f"I/O error: cannot open {handle.path}: {exc}")


def capacity_for_limit(soft_limit: int) -> int:
    """Half the descriptor limit for segments; the rest for sockets, indexes, metadata."""
    if soft_limit == resource.RLIM_INFINITY or soft_limit <= 0:
        return 1 << 20
    return max(MIN_CAPACITY, soft_limit // 2)


_default = FileHandleCache(capacity_for_limit(resource.getrlimit(resource.RLIMIT_NOFILE)[0]))


def default_cache() -> FileHandleCache:
    """The process-wide cache every Segment uses (descriptor limits are per process)."""
    return _default


def configure(capacity: int | None = None) -> FileHandleCache:
    """Sizes the process-wide cache: ``capacity``, or half the current soft descriptor limit
    (call after raising the limit)."""
    if capacity is None:
        capacity = capacity_for_limit(resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    _default.resize(capacity)
    return _default
