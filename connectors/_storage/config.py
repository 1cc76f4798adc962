"""The storage-sink keys Confluent's S3 and HDFS 3 sinks share, with their names and defaults.

``flush.size`` and ``format.class`` are required, as in Confluent. Extensions beyond Confluent
are marked so in their descriptions. ``schema.compatibility`` decides what a changed record
schema does to the open file, as in Confluent (``connectors._storage.compatibility``).
Other Confluent keys are sorted by ``_confluent_keys`` (each sink sets ``upstream_keys``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import Field, field_validator

from connectors._storage.formats import resolve_format
from hub.api import ConfigError, ConfigModel

_PART = "io.confluent.connect.storage.partitioner."


class StorageSinkConfig(ConfigModel):
    """Keys shared by the S3 and HDFS sinks."""

    topics: str | None = Field(None, description="Comma-separated topics to read.")
    topics_regex: str | None = Field(None, alias="topics.regex", description="Topic regex.")
    topics_dir: str = Field(
        "topics", alias="topics.dir", description="Top-level directory/prefix of written files."
    )
    flush_size: int = Field(
        alias="flush.size", gt=0, description="Records per topic partition before files commit."
    )
    rotate_interval_ms: int = Field(
        -1,
        alias="rotate.interval.ms",
        description="Commit when a record's timestamp is this far past the first record's in "
        "the open files (record time, from timestamp.extractor). -1 disables.",
    )
    rotate_schedule_interval_ms: int = Field(
        -1,
        alias="rotate.schedule.interval.ms",
        description="Commit open files at wall-clock boundaries of this interval (aligned to "
        "the timezone), even when no new records arrive. -1 disables.",
    )
    format_class: str = Field(
        alias="format.class",
        description="io.confluent.connect.s3.format.json.JsonFormat, "
        "...parquet.ParquetFormat, ...bytearray.ByteArrayFormat (or json/parquet/bytearray).",
    )
    partitioner_class: str = Field(
        _PART + "DefaultPartitioner",
        alias="partitioner.class",
        description="Default, Field, TimeBased, Hourly or Daily partitioner.",
    )
    partition_field_name: str = Field(
        "", alias="partition.field.name", description="FieldPartitioner: comma-separated fields."
    )
    path_format: str = Field(
        "", alias="path.format", description="TimeBasedPartitioner: Joda-Time directory pattern."
    )
    partition_duration_ms: int = Field(
        -1, alias="partition.duration.ms", description="TimeBasedPartitioner: bucket length."
    )
    locale: str = Field("", description="Empty or English: month and day names are English.")
    timezone: str = Field("", description="Time zone of time-based paths (UTC when empty).")
    timestamp_extractor: str = Field(
        "Wallclock", alias="timestamp.extractor", description="Record, RecordField or Wallclock."
    )
    timestamp_field: str = Field(
        "timestamp", alias="timestamp.field", description="RecordField: field with the time."
    )
    zero_pad_width: int = Field(
        10, alias="filename.offset.zero.pad.width", ge=0, description="Digits of offsets in names."
    )
    schema_compatibility: Literal["NONE", "BACKWARD", "FORWARD", "FULL"] = Field(
        "NONE",
        alias="schema.compatibility",
        description="NONE: any schema change rolls the file. BACKWARD/FULL: a newer schema "
        "version rolls it, records of older versions are projected onto the file's schema. "
        "FORWARD: the reverse.",
    )
    avro_codec: Literal["null", "deflate", "snappy", "bzip2", "xz", "zstandard"] = Field(
        "null", alias="avro.codec", description="AvroFormat block codec."
    )
    parquet_codec: str = Field(
        "snappy", alias="parquet.codec", description="none, snappy, gzip, zstd, lz4, brotli."
    )
    bytearray_extension: str = Field(
        ".bin", alias="format.bytearray.extension", description="ByteArrayFormat file extension."
    )
    bytearray_separator: str = Field(
        "\n", alias="format.bytearray.separator", description="ByteArrayFormat record separator."
    )
    compression_level: int = Field(
        -1, alias="s3.compression.level", description="gzip level (-1: default)."
    )

    @field_validator("schema_compatibility", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("locale")
    @classmethod
    def _english(cls, value: str) -> str:
        if value.strip() and not value.strip().lower().startswith("en"):
            raise ValueError(
                f"{value!r} is not supported: month and day names in path.format are English; "
                "leave locale empty or set an English one (en, en_US, ...)"
            )
        return value

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        errors = cross_field_errors(raw)
        try:
            config = super().parse(raw)
        except ConfigError as exc:
            for key, reasons in errors.items():
                exc.errors.setdefault(key, []).extend(reasons)
            raise
        if errors:
            raise ConfigError(f"invalid {cls.__name__}", errors)
        return config

    @property
    def compression(self) -> str:
        """Compression of JSON/bytes files; overridden by each sink's own key."""
        return "none"


def cross_field_errors(raw: Mapping[str, Any]) -> dict[str, list[str]]:
    """Rules beyond single fields: a topic source is needed, the format must be known."""
    errors: dict[str, list[str]] = {}
    if not (raw.get("topics") or raw.get("topics.regex")):
        errors["topics"] = ["Missing required configuration: set 'topics' or 'topics.regex'"]
    if raw.get("format.class"):
        try:
            resolve_format(str(raw["format.class"]))
        except ConfigError as exc:
            errors.update(exc.errors)
    return errors
