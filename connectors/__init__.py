"""Built-in connector plugins, one sub-package per external system. Not built yet."""
