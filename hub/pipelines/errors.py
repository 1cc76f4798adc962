"""Errors of the pipelines service.

Tree::

    PipelineError                   a pipeline request cannot be served
    ├── PipelineNotFoundError       no such pipeline (also a ``LookupError``)
    ├── PipelineConflictError       the name is taken, or a run is already going
    ├── InvalidPipelineError        bad template, config or schedule; ``errors`` per field
    │                               (also a ``ValueError``)
    └── PipelinesUnavailableError   this installation cannot run pipelines (Spark is not
                                    installed); the message says what to install

No HTTP status here: ``hub.rest.pipelines`` decides how each answers.
"""

from __future__ import annotations


class PipelineError(Exception):
    """Root of the pipelines service's errors; ``errors`` maps a field to its reasons."""

    def __init__(self, message: str, errors: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.message, self.errors = message, errors or {}


class PipelineNotFoundError(PipelineError, LookupError):
    pass


class PipelineConflictError(PipelineError):
    pass


class InvalidPipelineError(PipelineError, ValueError):
    pass


class PipelinesUnavailableError(PipelineError):
    pass
