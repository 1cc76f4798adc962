"""Spark pipelines managed by the hub: definitions, cron schedules and runs (``service``).

Runs are subprocesses of ``sluice pipelines run``; the templates and the scheduler are handed
in by the application, so this package imports no Spark code.
"""

from hub.pipelines.errors import (
    InvalidPipelineError,
    PipelineConflictError,
    PipelineError,
    PipelineNotFoundError,
    PipelinesUnavailableError,
)
from hub.pipelines.service import PipelinesService, TemplateCatalogue

__all__ = [
    "InvalidPipelineError",
    "PipelineConflictError",
    "PipelineError",
    "PipelineNotFoundError",
    "PipelinesService",
    "PipelinesUnavailableError",
    "TemplateCatalogue",
]
