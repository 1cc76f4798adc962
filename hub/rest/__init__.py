"""The hub's REST API: Kafka Connect's paths and payloads over one ``Herder``.

Routers (one per resource) only translate HTTP into herder calls; the herder owns every rule
about connectors. ``create_app(herder, worker_config)`` is the only entry point the runtime needs.

``create_app`` is imported lazily: ``sluice connectors`` uses only ``hub.rest.client`` and
should not pay for importing FastAPI on every command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hub.rest.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from hub.rest.app import create_app

        return create_app
    raise AttributeError(f"module 'hub.rest' has no attribute {name!r}")
