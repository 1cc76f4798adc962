"""``SetSchemaMetadata``: renames and/or re-versions the key or value schema.

As Kafka's ``org.apache.kafka.connect.transforms.SetSchemaMetadata$Key``/``$Value``: at least
one of ``schema.name``/``schema.version`` must be set; a record whose operating value and
schema are both null (a tombstone) passes unchanged; a schemaless value is an error ("Schema
required"). Only the top-level schema changes (type, optionality, default, doc, parameters
and fields stay). ``replace.null.with.default`` (KIP-1040, default true) is Kafka's copy of a
struct through ``Struct.get``: a null field whose schema has a default becomes the default;
false keeps the nulls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from pydantic import Field

from hub.api import ConfigError, ConfigModel, DataError, Schema, Transformation, Type, UpstreamKeys
from hub.api.transform import Variant
from hub.transforms._util import R, java_aliases, operating, updated

UPSTREAM = UpstreamKeys(
    system="Kafka SetSchemaMetadata",
    known=frozenset({"schema.name", "schema.version", "replace.null.with.default"}),
    doc="docs/transforms.md",
)


class SetSchemaMetadataConfig(ConfigModel):
    upstream_keys = UPSTREAM

    schema_name: str | None = Field(None, alias="schema.name", description="Schema name to set.")
    schema_version: int | None = Field(
        None, alias="schema.version", description="Schema version to set."
    )
    replace_null_with_default: bool = Field(
        True, alias="replace.null.with.default",
        description="Null struct fields with a schema default become the default.",
    )  # fmt: skip

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        config = super().parse(raw)
        if config.schema_name is None and config.schema_version is None:
            reason = ["Neither schema name nor version configured"]
            raise ConfigError("invalid SetSchemaMetadata", {"schema.name": reason})
        return config


class SetSchemaMetadata(Transformation[R]):
    name = "SetSchemaMetadata"
    aliases = java_aliases("SetSchemaMetadata")
    variants = ("key", "value")
    config_model = SetSchemaMetadataConfig
    description = "Set the name and/or version of the key or value schema."

    def __init__(self, config: SetSchemaMetadataConfig, variant: Variant | None = None) -> None:
        super().__init__(config, variant or "value")
        self._cache: tuple[Schema, Schema] | None = None

    def apply(self, record: R) -> R | None:
        value, schema = operating(record, self.variant)
        if value is None and schema is None:
            return record
        if schema is None:
            raise DataError("Schema required for [updating schema metadata]")
        new_schema = self._updated(schema)
        if schema.type is Type.STRUCT and isinstance(value, dict):
            value = self._copy(schema, value)
        return updated(record, self.variant, value, new_schema)

    def _updated(self, schema: Schema) -> Schema:
        cached = self._cache
        if cached is not None and cached[0] is schema:
            return cached[1]
        c = self.config
        new = Schema(
            schema.type, optional=schema.optional, default=schema.default,
            name=c.schema_name if c.schema_name is not None else schema.name,
            version=c.schema_version if c.schema_version is not None else schema.version,
            doc=schema.doc, parameters=schema.parameters, fields=schema.fields,
            key=schema.key, value=schema.value,
        )  # fmt: skip
        self._cache = (schema, new)
        return new

    def _copy(self, schema: Schema, value: dict[str, Any]) -> dict[str, Any]:
        if not self.config.replace_null_with_default:
            return dict(value)
        return {
            f.name: f.schema.default if value.get(f.name) is None else value.get(f.name)
            for f in schema.fields
        }
