"""Built-in connector plugins, one sub-package per external system (see docs/connectors/).

Each sub-package imports only ``hub.api`` from the hub and registers through the same
``sluice_connectors`` hook a third-party plugin uses.
"""
