"""``ReplaceField``: keeps, drops and renames fields.

A field survives if it is not in ``exclude`` and ``include`` is empty or lists it; survivors
are then renamed by ``renames`` (``old:new`` pairs). ``blacklist``/``whitelist`` are the
deprecated names of ``exclude``/``include`` and still accepted, merged into them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from hub.api import ConfigModel, Schema
from hub.api.schema import Field as SchemaField
from hub.api.transform import Variant
from hub.transforms._base import FieldTransform
from hub.transforms._util import (
    CommaList,
    R,
    copy_schema,
    java_aliases,
    require_map,
    require_struct,
)


class ReplaceFieldConfig(ConfigModel):
    exclude: CommaList = Field(default_factory=list, description="Fields to drop.")
    include: CommaList = Field(
        default_factory=list, description="Fields to keep (empty keeps all)."
    )
    renames: CommaList = Field(default_factory=list, description="old:new field renames.")
    blacklist: CommaList = Field(default_factory=list, description="Deprecated: use exclude.")
    whitelist: CommaList = Field(default_factory=list, description="Deprecated: use include.")

    @field_validator("renames")
    @classmethod
    def _pairs(cls, value: list[str]) -> list[str]:
        for item in value:
            old, sep, new = item.partition(":")
            if not sep or not old.strip() or not new.strip() or ":" in new:
                raise ValueError(f"{item!r}: expected old:new")
        return value


class ReplaceField(FieldTransform[R]):
    name = "ReplaceField"
    aliases = java_aliases("ReplaceField")
    config_model = ReplaceFieldConfig
    description = "Drop, keep or rename fields."

    def __init__(self, config: ReplaceFieldConfig, variant: Variant | None = None) -> None:
        super().__init__(config, variant)
        self.exclude = frozenset(config.exclude) | frozenset(config.blacklist)
        self.include = frozenset(config.include) | frozenset(config.whitelist)
        self.renames = dict(
            (old.strip(), new.strip())
            for old, _, new in (item.partition(":") for item in config.renames)
        )

    def keeps(self, name: str) -> bool:
        return name not in self.exclude and (not self.include or name in self.include)

    def apply_schemaless(self, record: R, value: Any) -> Any:
        if value is None:
            return None
        data = require_map(value, "field replacement")
        return {self.renames.get(k, k): v for k, v in data.items() if self.keeps(k)}

    def apply_with_schema(self, record: R, value: Any, schema: Schema) -> tuple[Schema | None, Any]:
        new_schema = self.schemas.get(schema, self._schema)
        if value is None:
            return new_schema, None
        data = require_struct(value, schema, "field replacement")
        kept = (f.name for f in schema.fields if self.keeps(f.name))
        return new_schema, {self.renames.get(n, n): data.get(n) for n in kept}

    def _schema(self, schema: Schema) -> Schema:
        fields = [
            SchemaField(self.renames.get(f.name, f.name), f.schema)
            for f in schema.fields
            if self.keeps(f.name)
        ]
        return copy_schema(schema, fields)
