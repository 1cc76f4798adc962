"""The streaming-replication side: a ``replication=database`` connection driven by hand.

psycopg 3 has no replication API, but on such a connection ``START_REPLICATION`` puts libpq
into COPY BOTH mode, which psycopg's low-level ``pgconn`` exposes (``get_copy_data`` /
``put_copy_data``). Messages in (streaming replication protocol):

* ``w`` XLogData: Int64 start LSN, Int64 server WAL end, Int64 send time, then one pgoutput
  message;
* ``k`` keepalive: Int64 server WAL end, Int64 send time, Byte1 reply requested.

Out: ``r`` standby status update (written/flushed/applied LSN, client time, reply flag). The
*flushed* LSN is what the server stores as the slot's ``confirmed_flush_lsn``: WAL before it
may be recycled and transactions committed before it are never sent again. The task reports
only positions whose changes the hub committed (see ``source_task``), so a crash loses nothing.

Not thread-safe: one thread (the task's) owns the connection; ``stop`` only sets a flag.
"""

from __future__ import annotations

import logging
import select
import struct
import time
from dataclasses import dataclass

import psycopg
from psycopg import pq

from hub.api import ConnectError, RetriableError

log = logging.getLogger(__name__)

_PG_EPOCH_US = 946_684_800_000_000  # 2000-01-01 in Unix microseconds
_XLOG_HEAD = struct.Struct(">QQq")
_KEEPALIVE = struct.Struct(">QqB")
_STATUS = struct.Struct(">cQQQqB")


def lsn_to_str(lsn: int) -> str:
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def str_to_lsn(text: str) -> int:
    high, low = text.split("/")
    return (int(high, 16) << 32) | int(low, 16)


def pg_time_to_unix_us(pg_us: int) -> int:
    return pg_us + _PG_EPOCH_US


XLOG_PAYLOAD = 25  # the pgoutput message starts here in a ``w`` message
xlog_start = struct.Struct(">Q").unpack_from
"""``xlog_start(buf, 1)[0]``: the start LSN of a ``w`` message."""


@dataclass(frozen=True, slots=True)
class XLogData:
    lsn: int
    wal_end: int
    payload: bytes


@dataclass(frozen=True, slots=True)
class Keepalive:
    wal_end: int
    reply: bool


def keepalive(buf: bytes) -> Keepalive:
    wal_end, _, reply = _KEEPALIVE.unpack_from(buf, 1)
    return Keepalive(wal_end, bool(reply))


class ReplicationConnection:
    """One replication connection: slot management, then the COPY BOTH stream."""

    def __init__(self, conninfo: str, ident: str) -> None:
        self.ident = ident
        self.conn = psycopg.connect(conninfo, replication="database", autocommit=True)
        self.streaming = False
        self._last_status = 0.0

    # -- commands (before streaming) -------------------------------------------------------

    def create_slot(self, slot: str, export_snapshot: bool) -> tuple[int, str | None]:
        """Creates the logical slot; returns (consistent point LSN, exported snapshot name).

        The exported snapshot stays valid while this connection stays open and idle, which is
        why the snapshot reads on another connection and streaming starts only afterwards.
        """
        mode = "EXPORT_SNAPSHOT" if export_snapshot else "NOEXPORT_SNAPSHOT"
        row = self.conn.execute(
            f'CREATE_REPLICATION_SLOT "{slot}" LOGICAL pgoutput {mode}'  # type: ignore[arg-type]
        ).fetchone()
        assert row is not None
        log.info("[%s] created replication slot %s at %s", self.ident, slot, row[1])
        return str_to_lsn(row[1]), row[2]

    def drop_slot(self, slot: str) -> None:
        self.conn.execute(f'DROP_REPLICATION_SLOT "{slot}"')  # type: ignore[arg-type]

    def start(self, slot: str, publication: str, start_lsn: int) -> None:
        """Enters COPY BOTH; the server begins after max(start_lsn, confirmed_flush_lsn)."""
        pub = publication.replace("'", "''")
        sql = (
            f'START_REPLICATION SLOT "{slot}" LOGICAL {lsn_to_str(start_lsn)} '
            f"(proto_version '1', publication_names '{pub}')"
        )
        pgconn = self.conn.pgconn
        pgconn.send_query(sql.encode())
        result = pgconn.get_result()
        if result is None or result.status != pq.ExecStatus.COPY_BOTH:
            message = (result.error_message.decode(errors="replace") if result else "").strip()
            while pgconn.get_result() is not None:
                pass
            raise classify_start_error(message, slot)
        pgconn.nonblocking = 1
        self.streaming = True
        log.info("[%s] streaming from slot %s at %s", self.ident, slot, lsn_to_str(start_lsn))

    # -- the stream ------------------------------------------------------------------------

    def read(self, timeout: float) -> XLogData | Keepalive | None:
        """The next message, waiting at most ``timeout`` seconds; None when none came."""
        buf = self.read_raw(timeout)
        if buf is None:
            return None
        if buf[0] == 119:  # 'w'
            start, wal_end, _ = _XLOG_HEAD.unpack_from(buf, 1)
            return XLogData(start, wal_end, buf[XLOG_PAYLOAD:])
        if buf[0] == 107:  # 'k'
            return keepalive(buf)
        return None

    def read_raw(self, timeout: float) -> bytes | None:
        """The next CopyData message as bytes (``w`` or ``k`` first), waiting at most
        ``timeout`` seconds; None when none came. The task's hot loop uses this and
        ``xlog_start``/``keepalive`` instead of ``read``: no message object per change."""
        pgconn = self.conn.pgconn
        nbytes, data = pgconn.get_copy_data(1)
        if nbytes == 0:
            ready, _, _ = select.select([pgconn.socket], [], [], timeout)
            if not ready:
                return None
            pgconn.consume_input()
            nbytes, data = pgconn.get_copy_data(1)
            if nbytes == 0:
                return None
        if nbytes < 0:
            message = pgconn.error_message.decode(errors="replace").strip()
            raise RetriableError(f"replication stream ended: {message or 'server closed it'}")
        return bytes(data)

    def send_status(self, flushed: int, received: int, reply: bool = False) -> None:
        """Standby status update: ``flushed`` becomes the slot's confirmed_flush_lsn.

        ``reply`` asks the server for a keepalive, which carries its current send position.
        """
        now_us = time.time_ns() // 1000 - _PG_EPOCH_US
        msg = _STATUS.pack(b"r", max(received, flushed), flushed, flushed, now_us, int(reply))
        pgconn = self.conn.pgconn
        if pgconn.put_copy_data(msg) != 1:
            raise RetriableError("could not send a standby status update")
        pgconn.flush()
        self._last_status = time.monotonic()

    def status_due(self, interval: float) -> bool:
        return time.monotonic() - self._last_status >= interval

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:  # closing a broken connection must not mask the original error
            log.debug("[%s] error closing the replication connection", self.ident)


def classify_start_error(message: str, slot: str) -> ConnectError:
    """Maps START_REPLICATION failures to errors that tell the user what to do."""
    if "is active for PID" in message:
        return ConnectError(
            f"replication slot {slot!r} is in use by another client ({message}). Stop the other "
            "consumer (or another connector using this slot.name), or set a different slot.name."
        )
    return RetriableError(f"START_REPLICATION failed: {message}")
