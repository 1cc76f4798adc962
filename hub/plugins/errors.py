"""Errors of plugin discovery and lookup.

Tree::

    PluginError                 a plugin contributed something the registry cannot index,
    │                           or a name does not resolve; the message names it
    ├── PluginConflictError     two different classes claim one name or alias of a kind
    ├── InvalidPluginError      a hook returned something that is not a named plugin class
    └── PluginNotFoundError     no plugin of that kind answers to the name (also a
                                ``LookupError``); the message lists what exists

No HTTP status here: the REST layer decides how each one answers (``hub.rest.errors``).
"""

from __future__ import annotations


class PluginError(Exception):
    """Root of the plugin errors."""


class PluginConflictError(PluginError):
    """Two different plugin classes claim one name or alias of the same kind."""


class InvalidPluginError(PluginError):
    """A hook returned something that is not a named subclass of the kind's base class."""


class PluginNotFoundError(PluginError, LookupError):
    """No plugin of the kind is called so."""
