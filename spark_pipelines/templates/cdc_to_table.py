"""cdc_to_table: Debezium change topics -> current state per primary key -> table / Parquet.

Values are Debezium change events, with or without the JSON-converter envelope (``{"schema":
..., "payload": {...}}``): ``before``, ``after``, ``op`` (c, u, d, r). Tombstones (null values)
are skipped. Per micro-batch (``foreachBatch``) only the last change of each key counts (by
partition, offset: Debezium keys one row to one partition); deletes remove the key, every other
op upserts ``after``. Applying a batch is idempotent: the table gets delete + insert of the
touched keys in one transaction; the Parquet snapshot is rebuilt as old state minus touched keys
plus upserts, written beside the current one and swapped in with a rename, so a replayed batch
reproduces the same snapshot and a crash mid-write leaves the previous one intact.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from hub.api.paths import WritePath
from spark_pipelines.templates import _table
from spark_pipelines.templates._common import (
    TableOutput,
    TemplateConfig,
    checkpoint,
    query_name,
    read_topics,
)

NAME = "cdc_to_table"
DESCRIPTION = "Debezium change topics -> current state per key -> Parquet snapshot and/or table"


class Config(TemplateConfig):
    key: list[str] = Field(min_length=1, description="primary-key columns")
    columns: dict[str, str] = Field(description="column -> Spark SQL type, e.g. {'id': 'int'}")
    output_table: TableOutput | None = None
    snapshot_path: WritePath | None = Field(
        None, description="Parquet snapshot directory (local FS)"
    )

    @model_validator(mode="after")
    def _check(self) -> Config:
        missing = set(self.key) - set(self.columns)
        if missing:
            raise ValueError(f"key columns not in columns: {sorted(missing)}")
        if not (self.output_table or self.snapshot_path):
            raise ValueError("set output_table and/or snapshot_path")
        return self


def changes(df: Any, config: Config) -> Any:
    """Last change per key in ``df``: the key columns, ``op`` and the ``after`` columns."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    row = ", ".join(f"`{c}` {t}" for c, t in config.columns.items())
    event = f"before struct<{row}>, after struct<{row}>, op string"
    schema = f"payload struct<{event}>, {event}"
    parsed = df.where(F.col("value").isNotNull()).select(
        "partition", "offset", F.from_json(F.col("value").cast("string"), schema).alias("e")
    )
    unwrapped = parsed.select(
        "partition",
        "offset",
        F.coalesce("e.payload.op", "e.op").alias("op"),
        F.coalesce("e.payload.before", "e.before").alias("before"),
        F.coalesce("e.payload.after", "e.after").alias("after"),
    ).where(F.col("op").isin("c", "u", "d", "r"))
    keyed = unwrapped.select(
        "*",
        *(
            F.when(F.col("op") == "d", F.col(f"before.{k}"))
            .otherwise(F.col(f"after.{k}"))
            .alias(f"_k_{k}")
            for k in config.key
        ),
    )
    keys = [f"_k_{k}" for k in config.key]
    last = Window.partitionBy(*keys).orderBy(F.col("partition").desc(), F.col("offset").desc())
    return keyed.withColumn("_rank", F.row_number().over(last)).where("_rank = 1")


def _sink(config: Config) -> Any:
    def write(batch: Any, batch_id: int) -> None:
        latest = changes(batch, config).cache()
        upserts = latest.where("op != 'd'").select("after.*")
        deletes = latest.where("op = 'd'").select(*(latest[f"_k_{k}"].alias(k) for k in config.key))
        if config.output_table:
            cols = list(config.columns.items())
            _table.apply(
                config.output_table.url,
                config.output_table.table,
                cols,
                config.key,
                [r.asDict() for r in upserts.collect()],
                [r.asDict() for r in deletes.collect()],
            )
        if config.snapshot_path:
            _rewrite_snapshot(
                batch.sparkSession, Path(config.snapshot_path), config, latest, upserts
            )
        latest.unpersist()

    return write


def _rewrite_snapshot(spark: Any, path: Path, config: Config, latest: Any, upserts: Any) -> None:
    touched = latest.select(*(latest[f"_k_{k}"].alias(k) for k in config.key))
    retired = path.with_name(path.name + ".prev")
    if not path.exists() and retired.exists():
        retired.rename(path)  # crashed between the two renames below: the old state is current
    if path.exists():
        old = spark.read.parquet(str(path))
        state = old.join(touched, config.key, "left_anti").unionByName(upserts)
    else:
        state = upserts
    staging = path.with_name(path.name + ".next")
    shutil.rmtree(staging, ignore_errors=True)
    state.write.mode("overwrite").parquet(str(staging))
    shutil.rmtree(retired, ignore_errors=True)
    if path.exists():
        path.rename(retired)
    staging.rename(path)
    shutil.rmtree(retired, ignore_errors=True)


def start(spark: Any, config: Config, configure: Any) -> list[Any]:
    writer = (
        read_topics(spark, config.input)
        .writeStream.queryName(query_name(config, NAME, "state"))
        .option("checkpointLocation", checkpoint(config, "state"))
        .foreachBatch(_sink(config))
    )
    return [configure(writer).start()]
