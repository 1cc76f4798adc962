"""Kafka client settings a user-supplied config may not carry: they run code on the hub.

Connector configs reach Kafka clients (``consumer.override.*``), and so do pipeline configs
(``input.kafka``). librdkafka loads any shared library named in ``plugin.library.paths`` or
``ssl.engine.location`` and runs ``sasl.kerberos.kinit.cmd`` through a shell, so whoever can
write such a config could run code as the hub's user (a library written by a file sink, for
one). Kafka Connect limits overrides with ``connector.client.config.override.policy``; here
these three are refused wherever a config names them, under any prefix, at validation and
again where the client is built. Worker-level client settings (the worker file) are the
operator's and are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FORBIDDEN = {
    "plugin.library.paths": "loads shared libraries into the hub",
    "ssl.engine.location": "loads a shared library (an OpenSSL engine) into the hub",
    "sasl.kerberos.kinit.cmd": "runs a shell command on the hub",
}


def forbidden_setting(key: str) -> str | None:
    """Why ``key`` (possibly prefixed, e.g. ``consumer.override.``) is refused, or None."""
    for name, reason in FORBIDDEN.items():
        if key == name or key.endswith("." + name):
            return reason
    return None


def client_setting_errors(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """Key -> reason for every refused client setting in ``config``; empty when none."""
    errors: dict[str, list[str]] = {}
    for key in config:
        reason = forbidden_setting(str(key))
        if reason is not None:
            errors[str(key)] = [f"not allowed in a connector or pipeline config: it {reason}"]
    return errors
