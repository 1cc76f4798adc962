"""sql: a Spark SQL query over the input topics -> output topic, Parquet or table.

Each input is a temporary view with the Kafka-source columns plus ``value_str`` (value as
UTF-8 text) and, when ``json_schema`` is set, ``v`` (the value parsed with that DDL schema).
The statement must be a streaming-compatible query (aggregations need a watermark in append
mode, or ``output_mode=update``). A topic output needs a ``value`` column (``key``, ``headers``,
``topic``, ``partition`` optional) and is exactly once; Parquet is exactly once (append only);
a table output upserts by ``table_key`` per micro-batch (idempotent).

The statement may only query the views (``sql_guard``: no commands, script transforms, catalog
tables, files or Java calls): ``check`` refuses anything else when the pipeline is defined,
and ``start`` checks again with the run's own session before ``spark.sql`` sees it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hub.api.paths import Location
from spark_pipelines.templates import _table
from spark_pipelines.templates._common import (
    KafkaInput,
    TableOutput,
    TemplateConfig,
    checkpoint,
    query_name,
    read_topics,
    to_topic,
)

NAME = "sql"
DESCRIPTION = "A Spark SQL query over the input topic(s) -> topic, Parquet or table"


class View(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: KafkaInput
    json_schema: str | None = Field(None, description="DDL, e.g. 'id int, name string'")


class Config(TemplateConfig):
    input: KafkaInput | None = None  # type: ignore[assignment]
    views: dict[str, View] = Field(description="view name -> topics read into it")
    statement: str = Field(
        description="A Spark SQL query over the views (no commands, files or Java calls; "
        "docs/pipelines.md)"
    )
    output_mode: Literal["append", "update", "complete"] = "append"
    output_topic: str | None = None
    output_path: Location | None = None
    output_table: TableOutput | None = None
    table_key: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self) -> Config:
        if (
            sum(x is not None for x in (self.output_topic, self.output_path, self.output_table))
            != 1
        ):
            raise ValueError("set exactly one of output_topic, output_path, output_table")
        if self.output_table and not self.table_key:
            raise ValueError("output_table needs table_key")
        if not self.views:
            raise ValueError("views names no input")
        if self.input is None:
            self.input = next(iter(self.views.values())).input
        return self


def check(config: Config) -> dict[str, list[str]]:
    """``statement`` -> reasons it is refused (sql_guard); empty when it is a plain query."""
    from spark_pipelines.errors import MissingExtraError
    from spark_pipelines.extra import require_spark
    from spark_pipelines.sql_guard import StatementRefused, check_statement

    try:
        require_spark("checking a sql pipeline's statement")
        check_statement(config.statement, config.views)
    except MissingExtraError as exc:  # no pyspark: nothing can parse it, say what to install
        return {"statement": [str(exc)]}
    except StatementRefused as exc:
        return {"statement": exc.reasons}
    except Exception as exc:  # no Java, or the gateway died: refuse what cannot be checked
        reason = f"cannot check the statement: Spark's parser is unavailable ({exc})"
        return {"statement": [reason + "; the hub needs a Java runtime for sql pipelines"]}
    return {}


def start(spark: Any, config: Config, configure: Any) -> list[Any]:
    from pyspark.sql import functions as F

    from spark_pipelines.sql_guard import check_statement, session_parser

    check_statement(config.statement, config.views, session_parser(spark))  # before spark.sql
    for name, view in config.views.items():
        df = read_topics(spark, view.input).withColumn("value_str", F.col("value").cast("string"))
        if view.json_schema:
            df = df.withColumn("v", F.from_json("value_str", view.json_schema))
        df.createOrReplaceTempView(name)
    result = spark.sql(config.statement)
    if config.output_topic:
        return [
            to_topic(
                result,
                config,
                template=NAME,
                name="out",
                topic=config.output_topic,
                configure=configure,
                mode=config.output_mode,
            )
        ]
    writer = (
        result.writeStream.outputMode(config.output_mode)
        .queryName(query_name(config, NAME, "out"))
        .option("checkpointLocation", checkpoint(config, "out"))
    )
    if config.output_path:
        writer = writer.format("parquet").option("path", config.output_path)
    else:
        table = config.output_table
        assert table is not None

        def upsert(batch: Any, _batch_id: int) -> None:
            rows = [r.asDict() for r in batch.collect()]
            _table.apply(
                table.url, table.table, _table.spark_columns(batch), config.table_key, rows
            )

        writer = writer.foreachBatch(upsert)
    return [configure(writer).start()]
