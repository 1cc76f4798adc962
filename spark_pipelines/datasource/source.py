"""The ``sluice`` PySpark data source: topics as tables and streams, Spark Kafka-source style.

``spark.dataSource.register(SluiceDataSource)`` once per session (``runner.build_session``
does it); then ``spark.read.format("sluice")`` / ``readStream`` / ``write`` / ``writeStream``
with the options of Spark's built-in Kafka source (see ``_options``). The schema is that
source's — key, value, topic, partition, offset, timestamp, timestampType, headers — so a query
written for ``format("kafka")`` runs unchanged on ``format("sluice")`` without the Kafka jars;
option ``valueJsonFields`` (ours) appends ``value_json``, the values parsed in the reader.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType

from spark_pipelines.datasource._kafka import spark_schema
from spark_pipelines.datasource._options import Options


class SluiceDataSource(DataSource):
    """Factory Spark calls on the driver; each reader/writer it returns is pickled to tasks."""

    @classmethod
    def name(cls) -> str:
        return "sluice"

    def schema(self) -> str:
        # The one extension: option valueJsonFields appends column value_json (see _json).
        return spark_schema(Options(self.options).json_fields())

    def reader(self, schema: StructType) -> DataSourceReader:
        from spark_pipelines.datasource.reader import SluiceBatchReader

        return SluiceBatchReader(self.options)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from spark_pipelines.datasource.reader import SluiceStreamReader

        return SluiceStreamReader(self.options)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        from spark_pipelines.datasource.writer import SluiceBatchWriter

        return SluiceBatchWriter(self.options, schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        from spark_pipelines.datasource.writer import SluiceStreamWriter

        return SluiceStreamWriter(self.options, schema)


def register(spark: Any) -> None:
    """Registers the data source with ``spark`` (idempotent)."""
    spark.dataSource.register(SluiceDataSource)
