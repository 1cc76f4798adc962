# Hookspec bodies are never run (pluggy calls the implementations), hence "empty" bodies.
# mypy: disable-error-code="empty-body"
"""The hooks a Sluice plugin implements; the docstrings are the reference docs.

Every hook is prefixed ``sluice_`` and collects results from every plugin (none is
``firstresult``): each plugin contributes classes and the registry
(``hub.plugins.manager.PluginRegistry``) indexes them by ``name`` and ``aliases``. Built-ins
register through these same hooks (``hub.converters.plugin``, ``hub.transforms.plugin``,
``connectors.file.plugin``), so a third-party class is a peer of a built-in one.

Hooks return classes, not instances: the runtime instantiates them per connector/task with a
validated config, and the REST API reads their ``config_model`` without instantiating anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from hub.api import Connector, Converter, HeaderConverter, Predicate, Transformation

PROJECT = "sluice"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def sluice_connectors() -> list[type[Connector]]:
    """Connector classes this plugin provides.

    Runs once when the plugin registry is first asked for connectors (worker start, the REST
    API's ``/connector-plugins``), and again after a plugin is registered or unregistered.

    Parameters: none.

    Return a list of ``SourceConnector``/``SinkConnector`` subclasses. Each class's ``name`` is
    the short ``connector.class`` value; its ``aliases`` (e.g. the Java class name of the Kafka
    Connect connector it replaces) resolve to it as well. A name or alias claimed by two
    different classes is an error at discovery time.
    """


@hookspec
def sluice_transforms() -> list[type[Transformation[Any]]]:
    """Single Message Transform classes this plugin provides.

    Runs when the registry is first asked for transforms (building a connector's transform
    chain, listing plugins).

    Parameters: none.

    Return ``Transformation`` subclasses. A class whose ``variants`` is ``("key", "value")`` is
    also reachable as ``<name>$Key`` and ``<name>$Value`` (and the same for each alias), as
    Kafka Connect's nested ``$Key``/``$Value`` classes are.
    """


@hookspec
def sluice_predicates() -> list[type[Predicate[Any]]]:
    """Predicate classes (the ``predicates.<p>.type`` values) this plugin provides.

    Runs when the registry is first asked for predicates (building a transform chain).

    Parameters: none.

    Return ``Predicate`` subclasses, each resolvable by ``name`` and ``aliases``.
    """


@hookspec
def sluice_converters() -> list[type[Converter]]:
    """Key/value converter classes (``key.converter``/``value.converter``) this plugin provides.

    Runs when the registry is first asked for converters, i.e. when a task is configured.

    Parameters: none.

    Return ``Converter`` subclasses, each resolvable by ``name`` and ``aliases``.
    """


@hookspec
def sluice_header_converters() -> list[type[HeaderConverter]]:
    """Header converter classes (``header.converter``) this plugin provides.

    Runs when the registry is first asked for header converters.

    Parameters: none.

    Return ``HeaderConverter`` subclasses, each resolvable by ``name`` and ``aliases``.
    """
