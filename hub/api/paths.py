"""Which local files plugins may touch: the roots of the worker setting ``file.allowed.paths``.

A connector config is written by whoever can call the REST API, and a file connector reads or
writes whatever path it names, as the hub's user: ``/etc/shadow`` to a topic, attacker lines to
``/etc/cron.d/x``. So every path a plugin takes from a config must lie under one of the roots
(the idea of Kafka's ``allowed.paths`` for its file config provider):

- at validation, through the ``ReadPath``/``WritePath``/``PathGlob`` field types (``check_path``):
  the config is refused with a reason naming ``file.allowed.paths``;
- at every open, through ``open_checked``: a symlink planted or swapped after validation cannot
  lead outside either. The real path is resolved, checked, then opened from a descriptor of its
  directory whose own real path is checked again (``/proc/self/fd``), with ``O_NOFOLLOW`` on the
  last component — so what is opened is what was checked, not what a path said a moment ago.

``..`` and symlinks are resolved before the check, so neither escapes a root; a symlink inside
a root that points inside a root is fine.

The roots are process-wide: the worker sets them when it starts (``set_allowed_roots``), from
``file.allowed.paths`` or its default (the data directory and a ``files`` directory beside it;
docs/security.md). Outside a worker (a plugin's unit test, ``sluice pipelines run`` typed by a
user) no roots are set and paths are unrestricted: the caller is then the OS user anyway.
Thread safety: the roots are one immutable tuple swapped atomically.
"""

from __future__ import annotations

import errno
import glob as globbing
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator

from hub.api.errors import PathNotAllowedError as PathNotAllowedError

SETTING = "file.allowed.paths"
REMOTE_SCHEMES = frozenset(
    {"hdfs", "viewfs", "webhdfs", "s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs"}
)

_roots: tuple[str, ...] | None = None


def set_allowed_roots(roots: Iterable[str | os.PathLike[str]] | None) -> None:
    """Restricts file access to ``roots`` (their real paths); None lifts the restriction."""
    global _roots
    _roots = None if roots is None else tuple(os.path.realpath(os.fspath(r)) for r in roots)


def allowed_roots() -> tuple[str, ...] | None:
    return _roots


def default_roots(data_dir: str | os.PathLike[str]) -> list[Path]:
    """The data directory and ``files`` beside it (``./data`` -> ``./data``, ``./files``)."""
    data = Path(os.path.abspath(os.fspath(data_dir)))
    return [data, data.parent / "files"]


def roots_from_setting(value: str | None, data_dir: str | os.PathLike[str]) -> list[Path]:
    """``file.allowed.paths`` (comma-separated) as absolute paths; unset or empty -> default."""
    listed = [p.strip() for p in (value or "").split(",") if p.strip()]
    if not listed:
        return default_roots(data_dir)
    return [Path(os.path.abspath(os.path.expanduser(p))) for p in listed]


def _under(real: str, roots: tuple[str, ...]) -> bool:
    return any(real == root or os.path.commonpath([real, root]) == root for root in roots)


def _refuse(path: str, roots: tuple[str, ...]) -> PathNotAllowedError:
    shown = ", ".join(roots) or "(none)"
    return PathNotAllowedError(
        f"{path} is outside the directories files may be read or written in "
        f"({SETTING}={shown}); move the file there or add its directory to {SETTING} in the "
        "worker config"
    )


def check_path(path: str, *, glob: bool = False) -> str:
    """``path`` unchanged if it (or, for a glob, its fixed leading directories) resolves under
    a root; PathNotAllowedError otherwise."""
    roots = _roots
    if roots is None:
        return path
    target = os.path.expanduser(path)
    if glob and globbing.has_magic(target):
        fixed: list[str] = []
        for part in Path(target).parts:
            if globbing.has_magic(part):
                break
            fixed.append(part)
        target = os.path.join(*fixed) if fixed else "."
    if not _under(os.path.realpath(target), roots):
        raise _refuse(path, roots)
    return path


def check_location(location: str) -> str:
    """A local path or a URI: remote file systems (``hdfs://``, ``s3a://`` ...) pass, local
    paths (plain or ``file:``) must lie under a root."""
    parts = urlsplit(location)
    if parts.scheme.lower() in REMOTE_SCHEMES:
        return location
    if parts.scheme.lower() == "file":
        check_path(parts.path)
        return location
    if parts.scheme and len(parts.scheme) > 1:  # "C:" is a drive, not a scheme
        raise ValueError(
            f"unsupported scheme {parts.scheme}: use a local path or one of "
            f"{', '.join(sorted(REMOTE_SCHEMES))}"
        )
    return check_path(location)


FILE_DATABASES = frozenset({"sqlite", "duckdb"})


def check_database(driver: str, database: str | None) -> None:
    """Raises ValueError (naming the setting) when a file database (SQLite, DuckDB) lies
    outside the roots; in-memory databases and server databases pass. The database library
    opens the file itself, so this holds at validation and task start, not at each open."""
    if driver.split("+", 1)[0].lower() not in FILE_DATABASES:
        return
    if not database or database == ":memory:" or database.startswith(("md:", "motherduck:")):
        return
    try:
        check_path(database)
    except PathNotAllowedError as exc:
        raise ValueError(str(exc)) from None


def open_checked(path: str, flags: int, mode: int = 0o644) -> int:
    """``os.open`` that opens only files under a root, race-free (see module doc)."""
    roots = _roots
    if roots is None:
        return os.open(path, flags, mode)
    real = os.path.realpath(os.path.expanduser(path))
    if not _under(real, roots):
        raise _refuse(path, roots)
    directory, name = os.path.split(real)
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if not _under(_fd_path(dir_fd, directory), roots):
            raise _refuse(path, roots)  # a directory was swapped for a symlink meanwhile
        try:
            return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # the file was swapped for a symlink meanwhile
                raise _refuse(path, roots) from None
            raise
    finally:
        os.close(dir_fd)


def _fd_path(fd: int, fallback: str) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # no /proc (not Linux): the resolved path is the best available
        return os.path.realpath(fallback)


# pydantic reports ValueError (not other exceptions) as a validation error of the field.
def _check_read(value: str) -> str:
    try:
        return check_path(value)
    except PathNotAllowedError as exc:
        raise ValueError(str(exc)) from None


def _check_glob(value: str) -> str:
    try:
        return check_path(value, glob=True)
    except PathNotAllowedError as exc:
        raise ValueError(str(exc)) from None


def _check_location(value: str) -> str:
    try:
        return check_location(value)
    except PathNotAllowedError as exc:
        raise ValueError(str(exc)) from None


ReadPath = Annotated[str, AfterValidator(_check_read)]
"""A local file a plugin reads; validated against ``file.allowed.paths``."""
WritePath = ReadPath
"""A local file a plugin writes (the same rule: writes are no worse than reads to contain)."""
PathGlob = Annotated[str, AfterValidator(_check_glob)]
"""A path or glob; its fixed leading directories must lie under a root."""
Location = Annotated[str, AfterValidator(_check_location)]
"""A local path under a root, or a remote file system URI (hdfs://, s3a:// ...)."""
