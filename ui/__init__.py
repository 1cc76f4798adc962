"""Sluice's web console: static pages served by the hub under ``/ui``, and their backend
``/console/api`` (``ui/console_api.py``, over the ``kafka_admin`` layer).

The pages are plain HTML, CSS and ES modules in ``ui/static`` with no build step and no CDN, so
an installed wheel serves a working console offline. Broker data (topics, messages, groups,
rates) comes from standard Kafka clients against the worker's ``bootstrap.servers``, never from
Sluice's broker internals, so the console works the same against any Kafka cluster.
"""

from __future__ import annotations

from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent / "static"
"""Where the console's HTML, CSS and JavaScript live (shipped as package data)."""
