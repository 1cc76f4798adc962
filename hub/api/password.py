"""Secret config values: the ``Password`` type (Kafka's ``ConfigDef.Type.PASSWORD``)::

    password: Password = Field("", alias="database.password")
    token: Password | None = Field(None, alias="auth.token")

The value stays a plain ``str`` for the plugin. The JSON Schema says ``format: password``
(the console renders a password input), the REST API lists the key as type ``PASSWORD`` and
shows its value as ``[hidden]`` in every answer (``password_keys``; docs/security.md).
pydantic's ``SecretStr`` counts as a secret too.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any

from pydantic import BaseModel, GetJsonSchemaHandler, SecretStr
from pydantic.fields import FieldInfo
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema


class _PasswordMarker:
    """Marks a ``str`` field as a secret; see ``Password``."""

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        out = handler(schema)
        out.update({"format": "password", "writeOnly": True})
        return out

    def __repr__(self) -> str:
        return "PASSWORD"


PASSWORD = _PasswordMarker()
Password = Annotated[str, PASSWORD]
"""A secret config value (Kafka's PASSWORD type): a ``str`` to the plugin, hidden elsewhere."""


def is_password(field: FieldInfo) -> bool:
    """Whether a model field holds a secret: ``Password`` (optional or not) or ``SecretStr``."""
    return PASSWORD in field.metadata or _marked(field.annotation)


def _marked(annotation: Any) -> bool:
    if annotation is SecretStr:
        return True
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return PASSWORD in annotation.__metadata__ or _marked(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return any(_marked(arg) for arg in typing.get_args(annotation))
    return False


def password_keys(model: type[BaseModel]) -> frozenset[str]:
    """The user-facing names (aliases) of ``model``'s secret fields."""
    return frozenset(
        field.alias or name for name, field in model.model_fields.items() if is_password(field)
    )
