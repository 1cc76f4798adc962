"""Registers ``postgres-cdc`` through the same pluggy hook a third-party plugin uses."""

from __future__ import annotations

import pluggy

from connectors.postgres_cdc.connector import PostgresCdcConnector

hookimpl = pluggy.HookimplMarker("sluice")


@hookimpl
def sluice_connectors() -> list[type]:
    """The PostgreSQL CDC source (and, through its aliases, Debezium's class name)."""
    return [PostgresCdcConnector]
