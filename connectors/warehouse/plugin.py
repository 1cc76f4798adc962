"""Registers the warehouse sink through the same hook a third-party plugin uses."""

from __future__ import annotations

from connectors.warehouse.connector import WarehouseSinkConnector


def sluice_connectors() -> list[type]:
    """The warehouse sink (and, through its aliases, Confluent's JDBC sink class name)."""
    return [WarehouseSinkConnector]
