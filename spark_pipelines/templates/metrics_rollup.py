"""metrics_rollup: metric records -> per-window count/min/max/avg/p50/p95 -> topic and table.

Input values are JSON ``{"name": ..., "tags": {...}, "value": 1.5, "time": "<ISO-8601>"}``.
Tags are a map; rows are grouped by name and the canonical (key-sorted) JSON of the tags.
Each window size (default 1 minute and 1 hour) is one append-mode query with an event-time
watermark, so every output row is final. Each micro-batch of finished windows goes, inside
``foreachBatch``, to the topic (key ``<name>|<tags>|<window>|<start>``; a replayed batch writes
the same keys again, harmless for a keyed/compacted topic) and to the table (delete + insert
of the same keys in one transaction: replays leave the same rows). Percentiles are
``percentile_approx`` (exact below 10,000 values per group).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from spark_pipelines.templates import _table
from spark_pipelines.templates._common import (
    TableOutput,
    TemplateConfig,
    checkpoint,
    query_name,
    read_topics,
)

NAME = "metrics_rollup"
DESCRIPTION = "Metric records -> 1-minute/1-hour count/min/max/avg/p50/p95 -> topic and table"
KEY = ("name", "tags", "window", "window_start")


class Config(TemplateConfig):
    windows: list[str] = Field(default_factory=lambda: ["1 minute", "1 hour"])
    watermark: str = "2 minutes"
    output_topic: str | None = None
    output_table: TableOutput | None = None

    @model_validator(mode="after")
    def _check(self) -> Config:
        if not (self.output_topic or self.output_table):
            raise ValueError("set output_topic and/or output_table")
        return self


def metrics(df: Any) -> Any:
    from pyspark.sql import functions as F

    schema = "name string, tags map<string,string>, value double, time string"
    parsed = df.select(F.from_json(F.col("value").cast("string"), schema).alias("m")).select("m.*")
    return parsed.select(
        "name",
        F.to_json(
            F.map_from_entries(F.array_sort(F.map_entries(F.coalesce("tags", F.create_map()))))
        ).alias("tags"),
        "value",
        F.try_to_timestamp("time").alias("time"),
    ).where(F.col("time").isNotNull() & F.col("name").isNotNull() & F.col("value").isNotNull())


def rollup(parsed: Any, window: str, watermark: str) -> Any:
    from pyspark.sql import functions as F

    return (
        parsed.withWatermark("time", watermark)
        .groupBy(F.window("time", window), "name", "tags")
        .agg(
            F.count("value").alias("count"),
            F.min("value").alias("min"),
            F.max("value").alias("max"),
            F.avg("value").alias("avg"),
            F.percentile_approx("value", 0.5).alias("p50"),
            F.percentile_approx("value", 0.95).alias("p95"),
        )
        .select(
            "name",
            "tags",
            F.lit(window).alias("window"),
            F.col("window.start").alias("window_start"),
            F.col("window.end").alias("window_end"),
            "count",
            "min",
            "max",
            "avg",
            "p50",
            "p95",
        )
    )


def _sink(config: Config) -> Any:
    def write(batch: Any, batch_id: int) -> None:
        from pyspark.sql import functions as F

        if config.output_topic:
            keyed = batch.select(
                F.concat_ws(
                    "|", "name", "tags", "window", F.col("window_start").cast("string")
                ).alias("key"),
                F.to_json(F.struct(*batch.columns)).alias("value"),
            )
            (
                keyed.write.format("sluice")
                .option("kafka.bootstrap.servers", config.input.bootstrap_servers)
                .option("topic", config.output_topic)
                .mode("append")
                .save()
            )
        if config.output_table:
            rows = [r.asDict() for r in batch.collect()]
            cols = _table.spark_columns(batch)
            _table.apply(config.output_table.url, config.output_table.table, cols, KEY, rows)

    return write


def start(spark: Any, config: Config, configure: Any) -> list[Any]:
    parsed = metrics(read_topics(spark, config.input))
    queries = []
    for window in config.windows:
        name = "w-" + window.replace(" ", "")
        writer = (
            rollup(parsed, window, config.watermark)
            .writeStream.outputMode("append")
            .queryName(query_name(config, NAME, name))
            .option("checkpointLocation", checkpoint(config, name))
            .foreachBatch(_sink(config))
        )
        queries.append(configure(writer).start())
    return queries
