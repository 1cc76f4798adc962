"""log_aggregation: raw log lines -> parsed -> per-window counts by level and service.

Input values are log lines (the file source's topic): JSON objects with ``time``, ``level``,
``service``, ``host``, ``message``, or text parsed by a regex with those named groups. Lines
whose time does not parse are dropped. Counts use an event-time watermark and append mode: a
window is written once, when the watermark passes its end, so each output row is final. Outputs:
a topic (key ``<window start>|<level>|<service>``, JSON value) and/or Parquet files, each its own
query and checkpoint, both exactly once.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, model_validator

from hub.api.paths import Location
from spark_pipelines.templates._common import (
    TemplateConfig,
    checkpoint,
    query_name,
    read_topics,
    to_topic,
)

NAME = "log_aggregation"
DESCRIPTION = "Raw log lines -> parsed -> per-window counts by level/service -> topic and Parquet"
FIELDS = ("time", "level", "service", "host", "message")
COUNTED = ("time", "level", "service")
"""What the counts need: ``start`` parses only these (host and message are never read)."""


class Config(TemplateConfig):
    format: Literal["json", "regex"] = "json"
    regex: str | None = Field(
        None,
        description="named groups time, level, service[, host, message] (Python or Java syntax)",
    )
    time_format: str | None = Field(None, description="Spark datetime pattern; ISO-8601 if unset")
    window: str = "1 minute"
    watermark: str = "10 minutes"
    output_topic: str | None = None
    output_path: Location | None = Field(None, description="Parquet directory")

    @model_validator(mode="after")
    def _check(self) -> Config:
        if self.format == "regex" and not self.regex:
            raise ValueError("format=regex needs regex")
        if not (self.output_topic or self.output_path):
            raise ValueError("set output_topic and/or output_path")
        return self


def parse(df: Any, config: Config, fields: tuple[str, ...] = FIELDS) -> Any:
    """Columns ``fields`` (time as a timestamp, the rest strings) from the raw ``value``.

    JSON comes parsed from the reader (column ``value_json``, see ``start``) when ``df`` has it,
    else through ``from_json``, which gives the same rows at several times the cost.
    """
    from pyspark.sql import functions as F

    line = F.col("value").cast("string")
    if config.format == "json" and "value_json" in df.columns:
        parsed = df.select(*(F.col("value_json").getField(f).alias(f) for f in fields))
    elif config.format == "json":
        schema = ", ".join(f"`{f}` string" for f in fields)
        parsed = df.select(F.from_json(line, schema).alias("j")).select("j.*")
    else:
        assert config.regex is not None
        groups = re.compile(config.regex.replace("(?<", "(?P<")).groupindex
        java = config.regex.replace("(?P<", "(?<")
        parsed = df.select(
            *(
                (F.regexp_extract(line, java, groups[f]) if f in groups else F.lit(None)).alias(f)
                for f in fields
            )
        )
    stamp = (
        F.try_to_timestamp("time", F.lit(config.time_format))
        if config.time_format
        else F.try_to_timestamp("time")
    )
    return parsed.withColumn("time", stamp).where(F.col("time").isNotNull())


def aggregate(parsed: Any, config: Config) -> Any:
    from pyspark.sql import functions as F

    return (
        parsed.withWatermark("time", config.watermark)
        .groupBy(F.window("time", config.window), "level", "service")
        .count()
        .select(
            F.col("window.start").alias("window_start"),
            F.col("window.end").alias("window_end"),
            "level",
            "service",
            "count",
        )
    )


def start(spark: Any, config: Config, configure: Any) -> list[Any]:
    from pyspark.sql import functions as F

    json_fields = COUNTED if config.format == "json" else ()
    source = read_topics(spark, config.input, json_fields)
    counts = aggregate(parse(source, config, COUNTED), config)
    queries = []
    if config.output_topic:
        keyed = counts.select(
            F.concat_ws(
                "|", F.date_format("window_start", "yyyy-MM-dd'T'HH:mm:ss'Z'"), "level", "service"
            ).alias("key"),
            F.to_json(F.struct(*counts.columns)).alias("value"),
        )
        queries.append(
            to_topic(
                keyed,
                config,
                template=NAME,
                name="topic",
                topic=config.output_topic,
                configure=configure,
            )
        )
    if config.output_path:
        writer = (
            counts.writeStream.format("parquet")
            .outputMode("append")
            .queryName(query_name(config, NAME, "parquet"))
            .option("path", config.output_path)
            .option("checkpointLocation", checkpoint(config, "parquet"))
        )
        queries.append(configure(writer).start())
    return queries
