"""Errors of the MirrorMaker 2 connectors and of the ``sluice mirror`` driver's file.

Tree::

    ConnectError (hub.api)
    └── MirrorError             root of this package
        ├── ClientConfigError   a ``source.cluster.*``/``target.cluster.*`` client setting that
        │                       cannot be used (names the key, never the value)
        ├── DriverConfigError   an mm2.properties problem; the message names the key (also a
        │                       ``ValueError``: the driver reports it with file errors)
        └── WireError           bytes in an internal topic that are not a record of the
                                expected format or version (also a ``ValueError``); the
                                offset-sync and checkpoint stores skip such records and log it

Being ``ConnectError``s, they fail a connector through the worker like any other connector
error; the refresh jobs hand them to ``context.raise_error``.
"""

from __future__ import annotations

from hub.api.errors import ConnectError


class MirrorError(ConnectError):
    """Root of the mirror connectors' errors."""


class ClientConfigError(MirrorError):
    """A client setting that cannot be used (names the key, never the value)."""


class DriverConfigError(MirrorError, ValueError):
    """An mm2.properties problem; the message names the key."""


class WireError(MirrorError, ValueError):
    """Bytes that are not a record of the expected format (or of an unknown version)."""
