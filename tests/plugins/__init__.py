"""Sample third-party plugins for the plugin-discovery tests (as datasette's tests/plugins)."""
