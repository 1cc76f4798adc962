"""Decoder of pgoutput protocol version 1 messages (the payload of each XLogData message).

Format (PostgreSQL docs, "Logical Replication Message Formats"): one type byte, then big-endian
fields. Tuple values arrive in text form (the type's output function), so one text-to-value
mapping (``types.py``) serves both the stream and the snapshot (which casts columns to text).

Why a hand-written decoder: psycopg has no logical replication support, and the messages are
simple; ``struct`` with precompiled formats keeps the per-row cost at a few microseconds.
Messages this connector has no use for (``M`` logical messages, protocol v2 stream control)
decode to None and are skipped.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

_I64 = struct.Struct(">q")
_U64 = struct.Struct(">Q")
_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
_BEGIN = struct.Struct(">QqI")
_COMMIT = struct.Struct(">BQQq")
_REL_HEAD = struct.Struct(">I")
_COL_TAIL = struct.Struct(">Ii")

UNCHANGED_TOAST = object()
"""Marker for a TOASTed value the server did not send (unchanged in an UPDATE)."""


@dataclass(frozen=True, slots=True)
class Begin:
    final_lsn: int  # LSN of the transaction's commit record
    commit_ts: int  # microseconds since 2000-01-01
    xid: int


@dataclass(frozen=True, slots=True)
class Commit:
    commit_lsn: int
    end_lsn: int
    commit_ts: int


@dataclass(frozen=True, slots=True)
class Origin:
    lsn: int
    name: str


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type_oid: int
    typmod: int
    is_key: bool


@dataclass(frozen=True, slots=True)
class Relation:
    oid: int
    namespace: str
    name: str
    replica_identity: str  # d(efault), n(othing), f(ull), i(ndex)
    columns: tuple[Column, ...]


@dataclass(frozen=True, slots=True)
class TypeMsg:
    oid: int
    namespace: str
    name: str


Tuple = list[str | object | None]  # text, None (NULL) or UNCHANGED_TOAST


@dataclass(frozen=True, slots=True)
class Insert:
    relid: int
    new: Tuple


@dataclass(frozen=True, slots=True)
class Update:
    relid: int
    old: Tuple | None  # key columns ('K') or the whole row ('O', REPLICA IDENTITY FULL)
    old_is_key: bool
    new: Tuple


@dataclass(frozen=True, slots=True)
class Delete:
    relid: int
    old: Tuple
    old_is_key: bool


@dataclass(frozen=True, slots=True)
class Truncate:
    relids: tuple[int, ...]
    cascade: bool
    restart_identity: bool


Message = Begin | Commit | Origin | Relation | TypeMsg | Insert | Update | Delete | Truncate


def _cstring(buf: bytes, pos: int) -> tuple[str, int]:
    end = buf.index(0, pos)
    return buf[pos:end].decode(), end + 1


def read_tuple(buf: bytes, pos: int) -> tuple[Tuple, int]:
    """TupleData at ``pos``: its values and the position after it (hot path: every change)."""
    (ncols,) = _I16.unpack_from(buf, pos)
    pos += 2
    out: Tuple = []
    append, unpack_len = out.append, _I32.unpack_from
    for _ in range(ncols):
        kind = buf[pos]
        if kind == 116:  # 't' text
            (length,) = unpack_len(buf, pos + 1)
            pos += 5 + length
            append(buf[pos - length : pos].decode())
            continue
        pos += 1
        if kind == 110:  # 'n' null
            append(None)
        elif kind == 117:  # 'u' unchanged toast
            append(UNCHANGED_TOAST)
        else:  # 'b' binary is never requested (binary option off)
            raise ValueError(f"unsupported tuple value kind {chr(kind)!r}")
    return out, pos


def read_row(
    buf: bytes,
    pos: int,
    names: Sequence[str],
    converters: Sequence[Callable[[str], Any] | None],
) -> dict[str, Any] | None:
    """TupleData at ``pos`` straight into ``{column: value}``, each text through its
    converter (None = keep the text); the hot path of inserts and updates, with no list in
    between. None when the tuple is not plain (an unchanged TOAST value, or a column count
    other than ``len(names)``): the caller then takes ``read_tuple`` + ``TableSchema.row``,
    which give the same dict for plain tuples."""
    (ncols,) = _I16.unpack_from(buf, pos)
    if ncols != len(names):
        return None
    pos += 2
    row: dict[str, Any] = {}
    unpack_len = _I32.unpack_from
    for name, convert in zip(names, converters, strict=True):
        kind = buf[pos]
        if kind == 116:  # 't' text
            (length,) = unpack_len(buf, pos + 1)
            pos += 5 + length
            text = buf[pos - length : pos].decode()
            row[name] = text if convert is None else convert(text)
        elif kind == 110:  # 'n' null
            pos += 1
            row[name] = None
        else:
            return None
    return row


def decode(buf: bytes) -> Message | None:
    """One pgoutput message, or None for kinds the connector ignores."""
    kind = buf[0]
    if kind == 73:  # 'I'
        (relid,) = _REL_HEAD.unpack_from(buf, 1)
        new, _ = read_tuple(buf, 6)  # buf[5] == 'N'
        return Insert(relid, new)
    if kind == 85:  # 'U'
        (relid,) = _REL_HEAD.unpack_from(buf, 1)
        pos = 5
        old = None
        marker = buf[pos]
        if marker in (75, 79):  # 'K' / 'O'
            old, pos = read_tuple(buf, pos + 1)
            marker = buf[pos]
        new, _ = read_tuple(buf, pos + 1)
        return Update(relid, old, old is not None and buf[5] == 75, new)
    if kind == 68:  # 'D'
        (relid,) = _REL_HEAD.unpack_from(buf, 1)
        old, _ = read_tuple(buf, 6)
        return Delete(relid, old, buf[5] == 75)
    if kind == 66:  # 'B'
        return Begin(*_BEGIN.unpack_from(buf, 1))
    if kind == 67:  # 'C'
        _flags, commit_lsn, end_lsn, ts = _COMMIT.unpack_from(buf, 1)
        return Commit(commit_lsn, end_lsn, ts)
    if kind == 82:  # 'R'
        return _relation(buf)
    if kind == 89:  # 'Y'
        (oid,) = _REL_HEAD.unpack_from(buf, 1)
        namespace, pos = _cstring(buf, 5)
        name, _ = _cstring(buf, pos)
        return TypeMsg(oid, namespace, name)
    if kind == 84:  # 'T'
        (nrels,) = _I32.unpack_from(buf, 1)
        options = buf[5]
        relids = struct.unpack_from(f">{nrels}I", buf, 6)
        return Truncate(tuple(relids), bool(options & 1), bool(options & 2))
    if kind == 79:  # 'O'
        (lsn,) = _U64.unpack_from(buf, 1)
        name, _ = _cstring(buf, 9)
        return Origin(lsn, name)
    return None


def _relation(buf: bytes) -> Relation:
    (oid,) = _REL_HEAD.unpack_from(buf, 1)
    namespace, pos = _cstring(buf, 5)
    name, pos = _cstring(buf, pos)
    identity = chr(buf[pos])
    (ncols,) = _I16.unpack_from(buf, pos + 1)
    pos += 3
    columns = []
    for _ in range(ncols):
        flags = buf[pos]
        col, pos = _cstring(buf, pos + 1)
        type_oid, typmod = _COL_TAIL.unpack_from(buf, pos)
        pos += 8
        columns.append(Column(col, type_oid, typmod, bool(flags & 1)))
    return Relation(oid, namespace or "pg_catalog", name, identity, tuple(columns))
