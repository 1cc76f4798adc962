"""Registers the file connectors through the same pluggy hook a third-party plugin uses."""

from __future__ import annotations

import pluggy

from connectors.file.connector import FileSinkConnector, FileSourceConnector

hookimpl = pluggy.HookimplMarker("sluice")


@hookimpl
def sluice_connectors() -> list[type]:
    """The file source and sink (and, through their ``aliases``, Kafka Connect's names)."""
    return [FileSourceConnector, FileSinkConnector]
