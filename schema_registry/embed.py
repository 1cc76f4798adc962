"""Serving the registry beside a hub worker: the one call ``sluice up`` makes.

``start(worker_config, port)`` runs a ``RegistryServer`` on the worker's REST host and
``port`` (0: none), using the worker's bootstrap servers and ``admin.``-prefixed client
settings, and the worker's REST credentials (``schema_registry.rest.auth``). It returns the
running server, or None when disabled; the caller stops it after the hub.
"""

from __future__ import annotations

import logging
from typing import Any

from schema_registry.server import TOPIC, RegistryServer

log = logging.getLogger(__name__)


def start(worker_config: Any, port: int) -> RegistryServer | None:
    if port == 0:
        log.info("schema registry disabled (--schema-registry-port 0)")
        return None
    raw = worker_config.raw() if hasattr(worker_config, "raw") else dict(worker_config)
    server = RegistryServer(
        worker_config.client_config("admin"),
        host=str(raw.get("rest.host.name", "127.0.0.1")),
        port=port,
        settings=worker_config,
        topic=str(raw.get("schema.registry.topic", TOPIC)),
        replication_factor=int(raw.get("replication.factor", -1)),
    )
    server.start()
    return server


def with_url(worker_config: Any, server: RegistryServer | None) -> Any:
    """The worker config with ``schema.registry.url`` naming ``server``, unless it names one
    already (the console reads it to list subjects and decode messages)."""
    if server is None or not hasattr(worker_config, "raw"):
        return worker_config
    raw = worker_config.raw()
    if raw.get("schema.registry.url"):
        return worker_config
    return type(worker_config).from_mapping({**raw, "schema.registry.url": server.url})
