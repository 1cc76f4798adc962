"""What every registry router shares: the registry from app state, JSON bodies, responses.

Bodies are read as bytes and parsed here, so any Content-Type works (Confluent's clients send
``application/vnd.schemaregistry.v1+json``, ``application/json`` or ``application/octet-stream``)
and a malformed body is a Confluent-style error rather than a framework one. Responses carry
Confluent's media type.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.responses import JSONResponse, Response

from schema_registry.errors import BadRequest
from schema_registry.registry import SchemaRegistry

MEDIA_TYPE = "application/vnd.schemaregistry.v1+json"


def registry(request: Request) -> SchemaRegistry:
    reg: SchemaRegistry = request.app.state.registry
    return reg


async def json_body(request: Request) -> Any:
    raw = await request.body()
    if not raw.strip():
        raise BadRequest("Request body is empty; expected a JSON object")
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise BadRequest(f"Unexpected character in the JSON body: {exc}") from None


def reply(value: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(value, status_code=status, media_type=MEDIA_TYPE)


def raw_schema(text: str) -> Response:
    """``.../schema`` endpoints answer the schema text itself (JSON for Avro/JSON Schema)."""
    return Response(text, media_type=MEDIA_TYPE)


Reg = Annotated[SchemaRegistry, Depends(registry)]
JsonBody = Annotated[Any, Depends(json_body)]
