"""Errors of the Spark pipelines package (data source, templates, runner).

Tree::

    SparkPipelinesError             root
    ├── OptionError                 a data source option is missing, contradictory or malformed;
    │                               the message names it (also a ``ValueError``, as Spark
    │                               reports option errors)
    ├── ProtocolError               the broker answered something this client did not ask for
    ├── MissingExtraError           pyspark/numpy are not installed; the message names the
    │                               ``pip install 'sluice[spark]'`` (also an ``ImportError``)
    ├── StatementRefused            a pipeline's SQL does something a pipeline may not
    │                               (``sql_guard``); ``reasons`` lists each finding (also a
    │                               ``ValueError``)
    └── Unsupported                 the native fetch path cannot read the rest of a range
                                    exactly; the reader falls back to the client (never
                                    reaches a user)

``_fetch._NoRecords`` (a ``TimeoutError``) stays private to the fetch loop: it is control flow
that ``read_range`` turns into its documented timeout.
"""

from __future__ import annotations


class SparkPipelinesError(Exception):
    """Root of the Spark pipelines' errors."""


class OptionError(SparkPipelinesError, ValueError):
    """An option is missing, contradictory or malformed; the message names it."""


class ProtocolError(SparkPipelinesError):
    """The broker answered something this client did not ask for."""


class MissingExtraError(SparkPipelinesError, ImportError):
    """The ``spark`` extra is not installed; the message says what to install."""


class Unsupported(SparkPipelinesError):
    """The fast path cannot read the rest of the range exactly; the message says why."""


class StatementRefused(SparkPipelinesError, ValueError):
    """The statement does something a pipeline may not; ``reasons`` lists each finding."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons
