"""Registers the S3 sink through the same pluggy hook a third-party plugin uses."""

from __future__ import annotations

from connectors.s3.connector import S3SinkConnector


def sluice_connectors() -> list[type]:
    """The S3 sink (and, through its ``aliases``, Confluent's class name)."""
    return [S3SinkConnector]
