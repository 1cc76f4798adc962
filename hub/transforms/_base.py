"""``FieldTransform``: the shape shared by the ``$Key``/``$Value`` transforms.

Kafka Connect picks the schemaless or the schema path from the operating schema alone (a dict
value with a struct schema is "with schema"); subclasses implement both paths and receive the
value, so they never look at which side of the record they work on.
"""

from __future__ import annotations

from typing import Any, ClassVar

from hub.api import Schema, Transformation
from hub.api.transform import Variant
from hub.transforms._util import R, SchemaCache, operating, updated


class FieldTransform(Transformation[R]):
    variants: ClassVar[tuple[Variant, ...]] = ("key", "value")

    def __init__(self, config: Any, variant: Variant | None = None) -> None:
        super().__init__(config, variant or "value")
        self.schemas = SchemaCache()

    def apply(self, record: R) -> R | None:
        value, schema = operating(record, self.variant)
        if schema is None:
            new_value = self.apply_schemaless(record, value)
            return updated(record, self.variant, new_value, None)
        new_schema, new_value = self.apply_with_schema(record, value, schema)
        return updated(record, self.variant, new_value, new_schema)

    def apply_schemaless(self, record: R, value: Any) -> Any:
        raise NotImplementedError

    def apply_with_schema(self, record: R, value: Any, schema: Schema) -> tuple[Schema | None, Any]:
        raise NotImplementedError
