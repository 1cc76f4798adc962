"""clean_dedupe_enrich: normalise fields, drop duplicates by key, join a reference table.

The article example: ``{"id", "title", "url", "author_id", "published_at"}`` records arrive from
several crawlers, with stray whitespace, mixed-case URLs and repeats. The template trims every
string field, lower-cases the ``lowercase`` fields, drops empty ``required`` fields, keeps the
first record per ``key`` within the watermark (``dropDuplicatesWithinWatermark``: state for a key
is dropped once the watermark passes its event time plus the delay), left-joins a static
reference table (Parquet, CSV with header, or a warehouse table) on ``join_on`` and writes JSON
to the output topic exactly once.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from hub.api.paths import Location
from spark_pipelines.templates._common import (
    TemplateConfig,
    checked_database_url,
    read_topics,
    to_topic,
)

NAME = "clean_dedupe_enrich"
DESCRIPTION = "Normalise fields, drop duplicates by key within a watermark, join a reference table"


class Reference(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["parquet", "csv", "table"] = "parquet"
    path: Location | None = None
    url: str | None = Field(None, description="SQLAlchemy URL when format=table")

    @field_validator("url")
    @classmethod
    def _local_file_under_roots(cls, value: str | None) -> str | None:
        return checked_database_url(value) if value else value

    table: str | None = None


class Config(TemplateConfig):
    fields: dict[str, str] = Field(
        default_factory=lambda: {
            "id": "string",
            "title": "string",
            "url": "string",
            "author_id": "string",
            "published_at": "timestamp",
        }
    )
    key: list[str] = Field(default_factory=lambda: ["id"])
    event_time: str = "published_at"
    watermark: str = "1 hour"
    lowercase: list[str] = Field(default_factory=lambda: ["url"])
    required: list[str] = Field(default_factory=lambda: ["id"])
    reference: Reference | None = None
    join_on: list[str] = Field(default_factory=lambda: ["author_id"])
    output_topic: str


def clean(df: Any, config: Config) -> Any:
    from pyspark.sql import functions as F

    schema = ", ".join(f"`{c}` {t}" for c, t in config.fields.items())
    parsed = df.select(F.from_json(F.col("value").cast("string"), schema).alias("r")).select("r.*")
    cols = []
    for name, kind in config.fields.items():
        col = F.col(name)
        if kind.lower() == "string":
            col = F.nullif(F.trim(col), F.lit(""))
            if name in config.lowercase:
                col = F.lower(col)
        cols.append(col.alias(name))
    out = parsed.select(*cols)
    for name in config.required:
        out = out.where(F.col(name).isNotNull())
    return out


def reference(spark: Any, ref: Reference) -> Any:
    if ref.format == "parquet":
        return spark.read.parquet(ref.path)
    if ref.format == "csv":
        return spark.read.option("header", "true").option("inferSchema", "true").csv(ref.path)
    import pandas as pd  # a warehouse table: read once on the driver, broadcast by size

    from spark_pipelines.templates._table import engine

    assert ref.url and ref.table
    return spark.createDataFrame(pd.read_sql_table(ref.table, engine(ref.url)))


def build(spark: Any, stream: Any, config: Config) -> Any:
    from pyspark.sql import functions as F

    cleaned = clean(stream, config).withWatermark(config.event_time, config.watermark)
    deduped = cleaned.dropDuplicatesWithinWatermark(config.key)
    if config.reference is not None:
        deduped = deduped.join(reference(spark, config.reference), config.join_on, "left")
    return deduped.select(
        F.concat_ws("|", *(F.col(k).cast("string") for k in config.key)).alias("key"),
        F.to_json(F.struct(*deduped.columns)).alias("value"),
    )


def start(spark: Any, config: Config, configure: Any) -> list[Any]:
    out = build(spark, read_topics(spark, config.input), config)
    return [
        to_topic(
            out, config, template=NAME, name="out", topic=config.output_topic, configure=configure
        )
    ]
