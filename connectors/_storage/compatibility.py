"""``schema.compatibility``: what a record whose schema differs from its open file's does.

As Confluent's storage sinks (``StorageSchemaCompatibility``) decide it:

* ``NONE``: any different schema commits the open file; the record starts a new one.
* ``BACKWARD`` / ``FULL``: a record with a *newer* schema version commits the file and
  starts one with the newer schema; a record with an older version is projected onto the
  file's (newer) schema (missing fields take their defaults) and goes into the same file.
* ``FORWARD``: the reverse: an *older* version rolls; a newer one is projected onto the
  file's schema (fields it lacks are dropped).

The versions are the Connect schema versions (the AvroConverter sets the registry's version);
with BACKWARD/FORWARD/FULL a schema without one is a DataError saying so, as in Confluent.
Projection follows Kafka Connect's ``SchemaProjector``: same type (or a numeric widening),
same name, struct fields matched by name, defaults for fields the source lacks.
"""

from __future__ import annotations

from typing import Any

from hub.api import DataError, Schema, SinkRecord, Type

_WIDENING = [Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64]


def decide(mode: str, current: Schema | None, incoming: Schema | None) -> str:
    """``same``, ``roll`` or ``project`` for a record of ``incoming`` meeting a file of
    ``current``."""
    if incoming is current or incoming == current:
        return "same"
    if mode == "NONE" or current is None or incoming is None:
        return "roll"
    if incoming.version is None or current.version is None:
        raise DataError(
            f"schema.compatibility={mode} needs versioned schemas (the AvroConverter sets the "
            f"registry version); got versions {current.version} and {incoming.version}"
        )
    newer = incoming.version > current.version
    if mode == "FORWARD":
        return "roll" if incoming.version < current.version else "project"
    return "roll" if newer else "project"


def project_record(record: SinkRecord, target: Schema) -> SinkRecord:
    source = record.value_schema
    assert source is not None
    try:
        value = project(source, record.value, target)
    except DataError as exc:
        raise DataError(
            f"{record.topic}-{record.partition}@{record.offset}: cannot project onto the open "
            f"file's schema version {target.version}: {exc}"
        ) from None
    return record.replace(value=value, value_schema=target)


def project(source: Schema, value: Any, target: Schema) -> Any:
    if value is None:
        if target.optional or target.default is not None:
            return target.default
        raise DataError("null value for a required field")
    if target.type is Type.STRUCT:
        if source.type is not Type.STRUCT or source.name != target.name:
            raise DataError(f"struct {source.name} cannot become {target.name}")
        out = {}
        for field in target.fields:
            have = source.field(field.name)
            if have is None:
                if field.schema.default is None and not field.schema.optional:
                    raise DataError(f"field {field.name!r} is missing and has no default")
                out[field.name] = field.schema.default
            else:
                out[field.name] = project(have.schema, value.get(field.name), field.schema)
        return out
    if target.type is Type.ARRAY:
        assert source.value is not None and target.value is not None
        return [project(source.value, v, target.value) for v in value]
    if target.type is Type.MAP:
        assert source.key and source.value and target.key and target.value
        return {project(source.key, k, target.key): project(source.value, v, target.value)
                for k, v in value.items()}  # fmt: skip
    if source.type is not target.type:
        if (
            source.type in _WIDENING
            and target.type in _WIDENING
            and (_WIDENING.index(source.type) < _WIDENING.index(target.type))
        ):
            return float(value) if target.type in (Type.FLOAT32, Type.FLOAT64) else value
        raise DataError(f"{source.type.value} cannot become {target.type.value}")
    if source.name != target.name:
        raise DataError(f"logical type {source.name} cannot become {target.name}")
    return value
