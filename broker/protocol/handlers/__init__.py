"""Request handlers, one module per Kafka API family; importing this package registers them all.

Modules are discovered rather than listed so that adding an API family is adding a module
(``groups.py`` belongs to the coordinator and registers itself the same way); modules whose
name starts with ``_`` are helpers, not handlers. A handler module that fails to import makes
this import fail, and with it the broker's start: a broker that silently stopped serving an
API (and stopped advertising it) would look healthy while every client of that API broke.
"""

from __future__ import annotations

import importlib
import pkgutil


def _import_all() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


_import_all()
