"""Is the ``spark`` extra installed? One answer, and one message naming what to install.

pyspark, numba and numpy come with ``pip install 'sluice[spark]'``, not with Sluice itself
(docs/install.md): a broker-and-hub user does not download ~700 MB for pipelines they never
run. Everything that needs them (``sluice pipelines run``, the data source, the hub's pipeline
runs) asks here first and refuses with ``SPARK_HINT`` rather than a ModuleNotFoundError.

numba is part of the extra but not required: it compiles the data source's native batch decoder,
and without it (or where compiling fails) the data source decodes with Python
(``_fetch.native_decoder()`` is None), slower but the same rows.
"""

from __future__ import annotations

import importlib.util
import sys

from spark_pipelines.errors import MissingExtraError

SPARK_MODULES = ("pyspark", "numpy")
"""What Spark work cannot run without (numba only speeds the data source up)."""
SPARK_HINT = "pip install 'sluice[spark]'"


def _installed(module: str) -> bool:
    if module in sys.modules:  # None there means "known missing" (and lets tests hide one)
        return sys.modules[module] is not None
    return importlib.util.find_spec(module) is not None


def missing_spark_modules() -> list[str]:
    """The modules of the ``spark`` extra this environment lacks (no import is made)."""
    return [m for m in SPARK_MODULES if not _installed(m)]


def require_spark(what: str) -> None:
    """Raises MissingExtraError naming ``what`` needs and how to install it, if anything lacks."""
    missing = missing_spark_modules()
    if missing:
        raise MissingExtraError(
            f"{what} needs Spark ({', '.join(missing)} not installed): {SPARK_HINT}"
        )
