"""Connecting and preparing the server: checks, publication, slot. Errors say what to do.

Every failure a user can fix becomes a ``ConnectError`` (task FAILED, message in the status
trace) naming the setting or the SQL that fixes it; a server that is merely unreachable is a
``RetriableError`` so a database restart does not fail the connector.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from connectors.postgres_cdc.config import PostgresCdcConfig
from connectors.postgres_cdc.replication import str_to_lsn
from hub.api import ConnectError, RetriableError

log = logging.getLogger(__name__)

_UNREACHABLE = ("Connection refused", "could not connect", "the database system is",
                "server closed the connection", "timeout expired", "No such file")  # fmt: skip


def connect_error(exc: psycopg.Error, config: PostgresCdcConfig) -> ConnectError:
    """Maps a connection/login failure to an error whose message tells the user what to do."""
    text = str(exc).strip()
    where = f"{config.hostname}:{config.port}/{config.dbname} as {config.user!r}"
    if "password authentication failed" in text or "no password supplied" in text:
        return ConnectError(
            f"PostgreSQL rejected the login {where}: {text}. "
            "Check database.user and database.password."
        )
    if "role" in text and "does not exist" in text:
        return ConnectError(f"PostgreSQL has no role {config.user!r} ({text}); fix database.user.")
    if "database" in text and "does not exist" in text:
        return ConnectError(f"database {config.dbname!r} does not exist; fix database.dbname.")
    if "pg_hba.conf" in text:
        return ConnectError(f"PostgreSQL refused {where} by pg_hba.conf: {text}")
    if "replication" in text.lower() and ("permission" in text or "must be" in text):
        return missing_replication(config)
    if any(marker in text for marker in _UNREACHABLE):
        return RetriableError(f"cannot reach PostgreSQL at {where}: {text}")
    return ConnectError(f"cannot connect to PostgreSQL at {where}: {text}")


def missing_replication(config: PostgresCdcConfig) -> ConnectError:
    return ConnectError(
        f"role {config.user!r} lacks the REPLICATION privilege needed for logical decoding; "
        f"run ALTER ROLE {config.user} WITH REPLICATION (or connect as a role that has it)."
    )


def open_connection(config: PostgresCdcConfig) -> psycopg.Connection[Any]:
    try:
        return psycopg.connect(config.conninfo(), autocommit=True)
    except psycopg.Error as exc:
        raise connect_error(exc, config) from None


def check_server(conn: psycopg.Connection[Any], config: PostgresCdcConfig) -> None:
    """wal_level and privileges, checked up front so the failure names its cause."""
    wal_level = conn.execute("SHOW wal_level").fetchone()[0]  # type: ignore[index]
    if wal_level != "logical":
        raise ConnectError(
            f"wal_level is {wal_level!r}, logical decoding needs 'logical': run ALTER SYSTEM SET "
            "wal_level = logical; then restart PostgreSQL."
        )
    row = conn.execute(
        "SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    if not row or not row[0]:
        raise missing_replication(config)


@dataclass(frozen=True)
class SlotState:
    exists: bool
    active: bool = False
    plugin: str = ""
    database: str = ""
    confirmed_flush: int = 0


def slot_state(conn: psycopg.Connection[Any], slot: str) -> SlotState:
    row = conn.execute(
        "SELECT active, plugin, database, confirmed_flush_lsn::text FROM pg_replication_slots "
        "WHERE slot_name = %s",
        (slot,),
    ).fetchone()
    if row is None:
        return SlotState(False)
    return SlotState(True, row[0], row[1] or "", row[2] or "", str_to_lsn(row[3] or "0/0"))


SLOT_RELEASE_WAIT_S = 15.0


def wait_for_inactive_slot(
    conn: psycopg.Connection[Any], slot: str, timeout: float = SLOT_RELEASE_WAIT_S
) -> SlotState:
    """The slot's state, after waiting up to ``timeout`` for an active slot to be released.

    When the previous run of this task died (kill -9, lost network), the server keeps the old
    walsender, and with it the slot, active until it notices the dead connection. Waiting a
    little here turns that into a short delay instead of a FAILED task; a slot that stays active
    is really used by another client, which ``check_slot`` reports.
    """
    deadline = time.monotonic() + timeout
    state = slot_state(conn, slot)
    while state.active and time.monotonic() < deadline:
        time.sleep(0.2)  # polling the server's view; nothing to wait on but the catalog
        state = slot_state(conn, slot)
    return state


def check_slot(state: SlotState, config: PostgresCdcConfig) -> None:
    if not state.exists:
        return
    if state.active:
        raise ConnectError(
            f"replication slot {config.slot_name!r} is in use by another client; stop the other "
            "consumer (another connector with this slot.name?) or set a different slot.name."
        )
    if state.plugin != "pgoutput" or state.database != config.dbname:
        raise ConnectError(
            f"replication slot {config.slot_name!r} belongs to database {state.database!r} with "
            f"plugin {state.plugin!r}; set another slot.name or drop that slot."
        )


def needs_snapshot(
    config: PostgresCdcConfig, offset: Mapping[str, Any] | None, slot: SlotState
) -> bool:
    """Whether ``snapshot.mode`` asks for a snapshot given the committed offset and the slot.

    An offset from a snapshot that never finished (no ``snapshot_completed``) counts as none:
    the exported snapshot it was read from is gone, so the snapshot starts over. ``always``
    and ``configuration_based`` with ``snapshot.data=true`` snapshot on every start;
    ``configuration_based`` with ``snapshot.on.data.error=true`` also when the committed
    offset's WAL is gone with the slot (as ``when_needed``).
    """
    completed = bool(offset) and not (
        offset.get("snapshot") and not offset.get("snapshot_completed")  # type: ignore[union-attr]
    )
    mode = config.snapshot_mode
    if mode in ("never", "no_data"):
        return False
    if mode == "always":
        return True
    if mode == "configuration_based":
        lost = completed and not slot.exists
        return config.snapshot_data or (config.snapshot_on_data_error and lost)
    if mode == "when_needed":
        return not completed or not slot.exists
    return not completed


def ensure_publication(
    conn: psycopg.Connection[Any], config: PostgresCdcConfig, tables: list[tuple[str, str]]
) -> None:
    """Creates the publication if missing: it must exist before the slot starts decoding."""
    name = config.publication_name
    if conn.execute("SELECT 1 FROM pg_publication WHERE pubname = %s", (name,)).fetchone():
        return
    mode = config.publication_autocreate_mode
    if mode == "disabled":
        raise ConnectError(
            f"publication {name!r} does not exist and publication.autocreate.mode=disabled; "
            f"create it (CREATE PUBLICATION {name} FOR TABLE ...) or change the mode."
        )
    if mode == "all_tables":
        stmt = sql.SQL("CREATE PUBLICATION {} FOR ALL TABLES").format(sql.Identifier(name))
    else:
        if not tables:
            raise ConnectError(
                "publication.autocreate.mode=filtered but no table matches the include/exclude "
                "lists; fix table.include.list."
            )
        idents = sql.SQL(", ").join(sql.Identifier(s, t) for s, t in tables)
        stmt = sql.SQL("CREATE PUBLICATION {} FOR TABLE {}").format(sql.Identifier(name), idents)
    try:
        conn.execute(stmt)
    except psycopg.errors.InsufficientPrivilege as exc:
        raise ConnectError(
            f"cannot create publication {name!r}: {exc}. Create it as a superuser, or set "
            "publication.autocreate.mode=filtered with a role owning the tables."
        ) from None
    except psycopg.errors.DuplicateObject:
        return
    log.info("created publication %s (%s)", name, mode)


def user_tables(conn: psycopg.Connection[Any]) -> list[tuple[str, str, int]]:
    """(schema, table, oid) of ordinary and partitioned tables outside system schemas."""
    return [
        (r[0], r[1], r[2])
        for r in conn.execute(
            "SELECT n.nspname, c.relname, c.oid FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p') "
            "AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
            "AND n.nspname NOT LIKE 'pg_toast%%' ORDER BY 1, 2"
        ).fetchall()
    ]


def drop_slot(config: PostgresCdcConfig) -> None:
    """``slot.drop.on.stop``: best effort; a slot left behind only retains WAL."""
    try:
        with psycopg.connect(config.conninfo(), autocommit=True) as conn:
            conn.execute("SELECT pg_drop_replication_slot(%s)", (config.slot_name,))
    except psycopg.Error as exc:
        log.warning("could not drop slot %s: %s", config.slot_name, exc)
