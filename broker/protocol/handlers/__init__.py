"""Request handlers, one module per Kafka API family; importing this package registers them all.

Modules are discovered rather than listed so that adding an API family is adding a module
(``groups.py`` belongs to the coordinator and registers itself the same way). A module that
fails to import is logged and skipped: the broker still serves every other API, and
ApiVersions stops advertising the missing ones, so clients see "unsupported" instead of a
broker that will not start.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil

log = logging.getLogger(__name__)


def _import_all() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        try:
            importlib.import_module(f"{__name__}.{info.name}")
        except ImportError:
            log.exception("handler module failed to import", extra={"module": info.name})


_import_all()
