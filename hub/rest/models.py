"""Request and response bodies, in Kafka Connect's JSON shapes (snake_case keys as Connect).

Request models validate what clients send; response models document what the herder returns
(the OpenAPI schema at /openapi.json). Responses are not re-validated against them: the herder
is the authority on its payloads, and a stricter copy here would turn a harmless extra field
into a 500. Config values are strings in Connect; numbers and booleans are accepted and turned
into their JSON text (``5`` -> ``"5"``, ``true`` -> ``"true"``), as Connect's JSON reader does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
)

from hub.runtime import names


def _config_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


# The schema says what is accepted (a string, or a number or boolean taken as its text).
_VALUE_SCHEMA: dict[str, Any] = {
    "anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]
}
ConfigValue = Annotated[str, BeforeValidator(_config_text), WithJsonSchema(_VALUE_SCHEMA)]
ConnectorConfig = dict[str, ConfigValue]
# A config that creates or replaces a connector: ``connector.class`` is required (the herder
# says so with a per-key error too); everything else is the plugin's to validate.
NewConnectorConfig = Annotated[
    ConnectorConfig,
    WithJsonSchema(
        {
            "type": "object",
            "properties": {"connector.class": {"type": "string", "minLength": 1}},
            "required": ["connector.class"],
            "additionalProperties": _VALUE_SCHEMA,
            "description": "Config keys and values; values are strings (numbers and booleans "
            "are taken as their text). The plugin validates the keys (400 with per-key reasons).",
        }
    ),
]


def _checked_name(name: str) -> str:
    reason = names.problem(name)
    if reason is not None:
        raise ValueError(reason)  # FastAPI answers 400 naming the field and this reason
    return name


# A readable reason on failure; the same rule as a pattern in the schema.
ConnectorName = Annotated[
    str,
    AfterValidator(_checked_name),
    WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "maxLength": names.MAX_LENGTH,
            "pattern": names.PATTERN,
            "description": f"At most {names.MAX_LENGTH} characters, no '/' or control "
            "characters, not blank; surrounding whitespace is trimmed.",
        }
    ),
]


def config_text(value: Any) -> str | None:
    """A task config value as Kafka Connect's ``Map<String, String>`` shows it: text as is,
    booleans ``true``/``false``, numbers in JSON, lists comma-separated, objects as JSON."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(_config_text(value))
    if isinstance(value, list | tuple):
        return ",".join(str(config_text(item)) for item in value)
    return json.dumps(value, sort_keys=True, default=str)


def config_strings(config: Mapping[str, Any]) -> dict[str, str | None]:
    return {str(key): config_text(value) for key, value in config.items()}


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
    model_config = ConfigDict(extra="forbid")

    name: ConnectorName
    config: NewConnectorConfig
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


def _some_offsets(offsets: list[ConnectorOffset]) -> list[ConnectorOffset]:
    if not offsets:
        raise ValueError("at least one partition and offset is required")
    return offsets


class AlterOffsetsRequest(BaseModel):
    offsets: Annotated[
        list[ConnectorOffset],
        AfterValidator(_some_offsets),
        Field(json_schema_extra={"minItems": 1}),
    ]


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


LOG_LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "WARNING", "ERROR", "FATAL", "CRITICAL", "OFF")


def _any_case(word: str) -> str:
    return "".join(f"[{ch}{ch.lower()}]" for ch in word)


class SetLoggerLevel(BaseModel):
    # The pattern documents exactly what ``loggers.python_level`` accepts (any case, spaces
    # around); the check itself stays there, for its readable message.
    level: str = Field(
        description="TRACE, DEBUG, INFO, WARN (or WARNING), ERROR, FATAL (or CRITICAL) or OFF.",
        json_schema_extra={
            "pattern": f"^\\s*({'|'.join(_any_case(level) for level in LOG_LEVELS)})\\s*$"
        },
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
