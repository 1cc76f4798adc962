"""Pieces every template shares: the input topic(s), checkpoints and the output topic.

Configs are pydantic models so ``sluice pipelines describe`` can print their JSON Schema and the
hub can validate a pipeline before it is scheduled. Each template exposes ``Config``,
``DESCRIPTION`` and ``start(spark, config, configure) -> list[StreamingQuery]``; ``configure``
applies the run's trigger (``runner.run``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class KafkaInput(BaseModel):
    """Where a pipeline reads: Spark Kafka-source options under friendlier names."""

    model_config = ConfigDict(extra="forbid")

    bootstrap_servers: str = Field(description="kafka.bootstrap.servers")
    topics: list[str] = Field(default_factory=list, description="subscribe")
    topic_pattern: str | None = Field(None, description="subscribePattern")
    starting_offsets: str = Field("earliest", description="earliest, latest or offsets JSON")
    max_offsets_per_trigger: int | None = Field(None, ge=1)
    kafka: dict[str, str] = Field(default_factory=dict, description="extra kafka.* options")

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
    checkpoint_dir: str = Field(description="one sub-directory per query; keep it between runs")
    query_name: str | None = Field(None, description="prefix of the streaming query names")


class TableOutput(BaseModel):
    """A warehouse table written through SQLAlchemy (PostgreSQL, DuckDB, SQLite, ...)."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="SQLAlchemy URL, e.g. postgresql+psycopg://u:p@host/db")
    table: str


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
