"""The hub's REST API: Kafka Connect's paths and payloads over one ``Herder``.

Routers (one per resource) only translate HTTP into herder calls; the herder owns every rule
about connectors. ``create_app(herder, worker_config)`` is the only entry point the runtime needs.
"""

from hub.rest.app import create_app

__all__ = ["create_app"]
