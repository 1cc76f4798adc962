"""The connector side of a plugin: turns one user config into task configs.

Lifecycle, called by the worker from one thread per connector::

    connector = MyConnector(context)
    connector.start(config)             # config: the validated ``config_model`` instance
    connector.task_configs(max_tasks)   # -> list of dicts, one per task to run
    ...                                 # context.request_task_reconfiguration() when the
    connector.stop()                    # set of tasks should change (e.g. new tables)

A plugin class names itself with ``name`` (the short ``connector.class``) and may accept
``aliases`` (e.g. the Java class name of the Kafka Connect connector it replaces).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from hub.api.config import ConfigModel


class ConnectorContext(Protocol):
    """What the runtime offers a running connector."""

    def request_task_reconfiguration(self) -> None:
        """Ask the worker to call ``task_configs`` again and restart tasks if they changed."""

    def raise_error(self, error: Exception) -> None:
        """Mark the connector FAILED from a background thread of the connector."""


class Connector(ABC):
    """Base of SourceConnector and SinkConnector."""

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    version: ClassVar[str] = "0.1.0"
    config_model: ClassVar[type[ConfigModel]] = ConfigModel
    description: ClassVar[str] = ""

    def __init__(self, context: ConnectorContext) -> None:
        self.context = context

    @abstractmethod
    def start(self, config: Any) -> None:
        """Called once with the validated config (an instance of ``config_model``)."""

    @classmethod
    @abstractmethod
    def task_class(cls) -> type[Any]:
        """The SourceTask or SinkTask subclass that does the work."""

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        """Configs for at most ``max_tasks`` tasks; each is given to one task's ``start``."""

    def stop(self) -> None:  # noqa: B027 - optional hook
        """Release what ``start`` acquired. Must return promptly."""

    @classmethod
    def validate(cls, raw: Mapping[str, Any]) -> dict[str, list[str]]:
        """Field -> reasons for problems beyond the model's (cross-field checks). Default none."""
        return {}
