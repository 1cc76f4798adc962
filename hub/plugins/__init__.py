"""Plugin discovery: pluggy hooks through which built-in and third-party plugins register.

Third-party packages need not import anything from here: a plugin module is any object with
functions named after the hooks (``def sluice_transforms(): ...``), registered through the
``sluice`` entry-point group. ``hookimpl`` exists for those who want pluggy's options
(``tryfirst``, ``trylast``, ``wrapper``).
"""

from hub.plugins.hookspecs import hookimpl, hookspec

__all__ = ["hookimpl", "hookspec"]
