"""Deprecated: build records with ``hub.api.record_factory`` instead.

``slot_setters`` used to be how connectors skipped the record constructors; it tied them to the
records' private layout. ``record_factory`` gives the same speed through the contract. This
alias stays for plugins written against the old name and warns once on import.
"""

from __future__ import annotations

import warnings

from hub.api._slots import Setter, slot_setters

warnings.warn(
    "hub.api.slots is deprecated: build records with hub.api.record_factory",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["Setter", "slot_setters"]
