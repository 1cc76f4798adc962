"""Registers the HDFS sink through the same pluggy hook a third-party plugin uses."""

from __future__ import annotations

from connectors.hdfs.connector import HdfsSinkConnector


def sluice_connectors() -> list[type]:
    """The HDFS sink (and, through its ``aliases``, Confluent's HDFS 3 class name)."""
    return [HdfsSinkConnector]
