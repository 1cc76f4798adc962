"""Request and response bodies, in Kafka Connect's JSON shapes (snake_case keys as Connect).

Request models validate what clients send; response models document what the herder returns
(the OpenAPI schema at /openapi.json). Responses are not re-validated against them: the herder
is the authority on its payloads, and a stricter copy here would turn a harmless extra field
into a 500. Config values are strings in Connect; numbers and booleans are accepted and turned
into their JSON text (``5`` -> ``"5"``, ``true`` -> ``"true"``), as Connect's JSON reader does.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


def _config_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


ConfigValue = Annotated[str, BeforeValidator(_config_text)]
ConnectorConfig = dict[str, ConfigValue]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ErrorResponse(BaseModel):
    error_code: int = Field(description="The HTTP status, repeated in the body as Connect does.")
    message: str
    errors: dict[str, list[str]] | None = Field(
        None, description="Per-field reasons, present when a config or request is invalid."
    )


class ServerInfo(_Open):
    version: str
    commit: str
    kafka_cluster_id: str


class CreateConnectorRequest(BaseModel):
    name: str = Field(min_length=1, description="Unique connector name.")
    config: ConnectorConfig = Field(default_factory=dict)
    initial_state: Literal["RUNNING", "PAUSED", "STOPPED"] = Field(
        "RUNNING",
        description="State the connector starts in (KIP-980): RUNNING, PAUSED (tasks created "
        "but paused) or STOPPED (no tasks; offsets can be set before the first run).",
    )


class ConnectorTaskId(_Open):
    connector: str
    task: int


class ConnectorInfo(_Open):
    name: str
    config: dict[str, str]
    tasks: list[ConnectorTaskId]
    type: str = Field(description="source, sink or unknown")


class WorkerState(_Open):
    state: str = Field(description="UNASSIGNED, RUNNING, PAUSED, STOPPED, FAILED or RESTARTING")
    worker_id: str
    trace: str | None = None


class TaskState(WorkerState):
    id: int


class ConnectorStateInfo(_Open):
    name: str
    connector: WorkerState
    tasks: list[TaskState]
    type: str


class TaskInfo(_Open):
    id: ConnectorTaskId
    config: dict[str, str]


class ConnectorExpansion(_Open):
    status: ConnectorStateInfo | None = None
    info: ConnectorInfo | None = None


class ConnectorOffset(BaseModel):
    partition: dict[str, Any]
    offset: dict[str, Any] | None = Field(
        description="The new offset; null removes the partition's offset."
    )


class ConnectorOffsets(BaseModel):
    offsets: list[ConnectorOffset]


class Message(_Open):
    message: str


class ActiveTopics(_Open):
    topics: list[str]


class PluginInfo(_Open):
    class_: str = Field(alias="class")
    type: str
    version: str | None = None


class ConfigKeyInfo(_Open):
    name: str
    type: str
    required: bool
    default_value: str | None = None
    importance: str | None = None
    documentation: str | None = None
    group: str | None = None
    order_in_group: int | None = None
    width: str | None = None
    display_name: str | None = None
    dependents: list[str] = Field(default_factory=list)


class ConfigValueInfo(_Open):
    name: str
    value: str | None = None
    recommended_values: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    visible: bool = True


class ConfigInfo(_Open):
    definition: ConfigKeyInfo
    value: ConfigValueInfo


class ConfigInfos(_Open):
    name: str
    error_count: int
    groups: list[str]
    configs: list[ConfigInfo]


class LoggerLevel(_Open):
    level: str = Field(description="Kafka level: TRACE, DEBUG, INFO, WARN, ERROR, FATAL or OFF.")
    last_modified: int | None = Field(
        None, description="When this worker last set the level (ms since epoch), if it did."
    )


class SetLoggerLevel(BaseModel):
    level: str = Field(
        min_length=1,
        description="TRACE, DEBUG, INFO, WARN (or WARNING), ERROR, FATAL (or CRITICAL) or OFF.",
    )


def documented(model: Any, description: str) -> dict[str, Any]:
    """A FastAPI ``responses`` entry: schema for the docs, no runtime re-validation."""
    return {"model": model, "description": description}


ERRORS: dict[int | str, dict[str, Any]] = {
    400: documented(ErrorResponse, "Invalid request or config (per-field reasons in `errors`)."),
    401: documented(ErrorResponse, "Missing or wrong credentials."),
    404: documented(ErrorResponse, "No such connector, task, plugin or logger."),
    409: documented(ErrorResponse, "Conflict: name taken, rebalance, or connector not STOPPED."),
    500: documented(ErrorResponse, "Unexpected error; the message says what, never a trace."),
}
