"""Registers the MirrorMaker 2 connectors through the same hook a third-party plugin uses."""

from __future__ import annotations

from typing import Any

from connectors.mirror.checkpoint_connector import MirrorCheckpointConnector
from connectors.mirror.heartbeat_connector import MirrorHeartbeatConnector
from connectors.mirror.source_connector import MirrorSourceConnector


def sluice_connectors() -> list[type[Any]]:
    """MirrorSourceConnector, MirrorCheckpointConnector, MirrorHeartbeatConnector (also under
    their ``org.apache.kafka.connect.mirror.*`` class names)."""
    return [MirrorSourceConnector, MirrorCheckpointConnector, MirrorHeartbeatConnector]
