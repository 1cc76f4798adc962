"""Pieces every template shares: the input topic(s), checkpoints and the output topic.

Configs are pydantic models so ``sluice pipelines describe`` can print their JSON Schema and the
hub can validate a pipeline before it is scheduled. Local paths (``Location``, ``ReadPath``)
must lie under the worker's ``file.allowed.paths`` (hub/api/paths.py), in the hub and again in
the run (``sluice pipelines run --allowed-paths``). Each template exposes ``Config``,
``DESCRIPTION`` and ``start(spark, config, configure) -> list[StreamingQuery]``; ``configure``
applies the run's trigger (``runner.run``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from hub.api.client_settings import client_setting_errors
from hub.api.paths import Location, check_database


class KafkaInput(BaseModel):
    """Where a pipeline reads: Spark Kafka-source options under friendlier names."""

    model_config = ConfigDict(extra="forbid")

    bootstrap_servers: str = Field(description="kafka.bootstrap.servers")
    topics: list[str] = Field(default_factory=list, description="subscribe")
    topic_pattern: str | None = Field(None, description="subscribePattern")
    starting_offsets: str = Field("earliest", description="earliest, latest or offsets JSON")
    max_offsets_per_trigger: int | None = Field(None, ge=1)
    kafka: dict[str, str] = Field(default_factory=dict, description="extra kafka.* options")

    @field_validator("kafka")
    @classmethod
    def _no_code_loading(cls, value: dict[str, str]) -> dict[str, str]:
        refused = client_setting_errors(value)
        if refused:
            raise ValueError("; ".join(f"{k}: {r[0]}" for k, r in refused.items()))
        return value

    def options(self) -> dict[str, str]:
        opts = {
            "kafka.bootstrap.servers": self.bootstrap_servers,
            "startingOffsets": self.starting_offsets,
            **{f"kafka.{k}": v for k, v in self.kafka.items()},
        }
        if self.topic_pattern:
            opts["subscribePattern"] = self.topic_pattern
        else:
            opts["subscribe"] = ",".join(self.topics)
        if self.max_offsets_per_trigger:
            opts["maxOffsetsPerTrigger"] = str(self.max_offsets_per_trigger)
        return opts


class TemplateConfig(BaseModel):
    """Fields every template has."""

    model_config = ConfigDict(extra="forbid")

    input: KafkaInput
    checkpoint_dir: Location = Field(
        description="one sub-directory per query; keep it between runs (a local path under "
        "file.allowed.paths, or hdfs://, s3a://, ...)"
    )
    query_name: str | None = Field(None, description="prefix of the streaming query names")


class TableOutput(BaseModel):
    """A warehouse table written through SQLAlchemy (PostgreSQL, DuckDB, SQLite, ...)."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="SQLAlchemy URL, e.g. postgresql+psycopg://u:p@host/db")
    table: str

    @field_validator("url")
    @classmethod
    def _local_file_under_roots(cls, value: str) -> str:
        return checked_database_url(value)


def checked_database_url(value: str) -> str:
    """A SQLAlchemy URL whose SQLite/DuckDB file (if any) lies under file.allowed.paths."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        url = make_url(value)
    except ArgumentError as exc:
        raise ValueError(f"not a SQLAlchemy URL: {exc}") from None
    check_database(url.drivername, url.database)
    return value


def read_topics(spark: Any, source: KafkaInput, json_fields: tuple[str, ...] = ()) -> Any:
    """The streaming DataFrame of the input topics (Spark Kafka-source columns).

    ``json_fields``: also column ``value_json``, those fields of the JSON values parsed in the
    reader (the data source's ``valueJsonFields``; much cheaper than ``from_json``).
    """
    reader = spark.readStream.format("sluice")
    for key, value in source.options().items():
        reader = reader.option(key, value)
    if json_fields:
        reader = reader.option("valueJsonFields", ",".join(json_fields))
    return reader.load()


def checkpoint(config: TemplateConfig, name: str) -> str:
    return str(Path(config.checkpoint_dir) / name)


def query_name(config: TemplateConfig, template: str, name: str) -> str:
    return f"{config.query_name or template}-{name}"


def to_topic(
    df: Any,
    config: TemplateConfig,
    *,
    template: str,
    name: str,
    topic: str,
    configure: Any,
    mode: Literal["append", "update", "complete"] = "append",
) -> Any:
    """Starts a query writing ``df`` (key, value columns) to ``topic`` exactly once."""
    writer = (
        df.writeStream.format("sluice")
        .outputMode(mode)
        .queryName(query_name(config, template, name))
        .option("kafka.bootstrap.servers", config.input.bootstrap_servers)
        .option("topic", topic)
        .option("writerId", f"{template}:{checkpoint(config, name)}")
        .option("checkpointLocation", checkpoint(config, name))
    )
    for key, value in config.input.kafka.items():
        writer = writer.option(f"kafka.{key}", value)
    return configure(writer).start()
