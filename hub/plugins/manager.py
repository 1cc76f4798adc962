"""Builds the plugin manager and the registry the runtime and the REST API look plugins up in.

Load order (as pytest and datasette do): the ``DEFAULT_PLUGINS`` modules, then every module of
the ``sluice`` setuptools entry-point group. Environment switches:

* ``SLUICE_DISABLE_ENTRYPOINTS=1`` skips the entry-point group; tests set it so whatever happens
  to be installed in the environment cannot change their outcome.
* ``SLUICE_TRACE_PLUGINS=1`` logs every hook call, its plugins and its result (logger
  ``hub.plugins.trace``) to find which plugin contributed or broke something.

A plugin module needs no marker import: any function named ``sluice_<hook>`` is taken as an
implementation (connector packages may import only ``hub.api``).
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pluggy
from pluggy import HookImpl, Result

from hub.plugins import hookspecs
from hub.plugins.registry import PluginRegistry

log = logging.getLogger(__name__)
trace_log = logging.getLogger("hub.plugins.trace")

ENTRYPOINT_GROUP = "sluice"

# Built-in plugins, registered through the same hooks as third-party ones. Every one ships with
# Sluice, so each must import: a built-in that fails to import is a broken install or a bug, and
# raises at start-up (and in the test suite) instead of quietly leaving a connector out.
DEFAULT_PLUGINS: tuple[str, ...] = (
    "hub.converters.plugin",
    "hub.transforms.plugin",
    "connectors.file.plugin",
    "connectors.postgres_cdc.plugin",
    "connectors.s3.plugin",
    "connectors.hdfs.plugin",
    "connectors.warehouse.plugin",
    "connectors.http.plugin",
    "connectors.mirror.plugin",
)


class SluicePluginManager(pluggy.PluginManager):
    """A pluggy manager that accepts unmarked ``sluice_*`` functions as hook implementations."""

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT)
        self.add_hookspecs(hookspecs)

    def parse_hookimpl_opts(self, plugin: object, name: str) -> Any:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith("sluice_") and callable(getattr(plugin, name, None)):
            # Same defaults as a bare @hookimpl: lets plugins skip importing hub.plugins.
            return {}
        return opts


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _enable_tracing(pm: pluggy.PluginManager) -> None:
    def before(hook_name: str, impls: Sequence[HookImpl], kwargs: Mapping[str, Any]) -> None:
        trace_log.info(
            "hook %s called on %s with %r", hook_name, [i.plugin_name for i in impls], kwargs
        )

    def after(
        outcome: Result[Any], hook_name: str, impls: Sequence[HookImpl], kwargs: Mapping[str, Any]
    ) -> None:
        trace_log.info("hook %s returned %r", hook_name, outcome.get_result())

    pm.add_hookcall_monitoring(before, after)


def create_plugin_manager(
    extra_plugins: Iterable[object] = (), *, load_entrypoints: bool | None = None
) -> PluginRegistry:
    """A fresh registry: defaults, then entry points (unless disabled), then ``extra_plugins``.

    ``load_entrypoints`` None follows ``SLUICE_DISABLE_ENTRYPOINTS``. Raises
    ``PluginConflictError`` if two classes claim one name, ``InvalidPluginError`` if a hook
    returns something that is not a named plugin class.
    """
    pm = SluicePluginManager()
    if _env_flag("SLUICE_TRACE_PLUGINS"):
        _enable_tracing(pm)
    for module_name in DEFAULT_PLUGINS:
        module = importlib.import_module(module_name)
        if not pm.is_registered(module):
            pm.register(module, name=module_name)
    if load_entrypoints is None:
        load_entrypoints = not _env_flag("SLUICE_DISABLE_ENTRYPOINTS")
    if load_entrypoints:
        count = pm.load_setuptools_entrypoints(ENTRYPOINT_GROUP)
        log.info("loaded %d plugin(s) from entry-point group %r", count, ENTRYPOINT_GROUP)
    for plugin in extra_plugins:
        pm.register(plugin)
    registry = PluginRegistry(pm)
    registry.check()
    return registry


_registry: PluginRegistry | None = None
_lock = threading.Lock()


def get_plugin_manager() -> PluginRegistry:
    """The process-wide registry, built on first use (see ``create_plugin_manager``)."""
    global _registry
    with _lock:
        if _registry is None:
            _registry = create_plugin_manager()
        return _registry


def reset_plugin_manager() -> None:
    """Forget the process-wide registry (tests, or after installing a plugin at runtime)."""
    global _registry
    with _lock:
        _registry = None
