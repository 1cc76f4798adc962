"""``/schemas``: schemas by their global id, and the supported types."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, Response

from schema_registry.formats import TYPES
from schema_registry.rest._common import Reg, raw_schema, reply
from schema_registry.rest.subjects import _formatted

router = APIRouter(tags=["schemas"])


@router.get("/schemas/types")
def schema_types() -> JSONResponse:
    return reply(sorted(TYPES, key=("JSON", "PROTOBUF", "AVRO").index))


@router.get("/schemas")
def list_schemas(
    reg: Reg,
    subject_prefix: Annotated[str, Query(alias="subjectPrefix")] = "",
    deleted: bool = False,
    latest_only: Annotated[bool, Query(alias="latestOnly")] = False,
    offset: int = 0,
    limit: int = -1,
) -> JSONResponse:
    records = reg.schemas(subject_prefix, deleted, latest_only)[max(offset, 0) :]
    if limit >= 0:
        records = records[:limit]
    return reply([r.response() for r in records])


@router.get("/schemas/ids/{schema_id}")
def by_id(
    schema_id: int,
    reg: Reg,
    subject: str | None = None,
    format: str = "",
) -> JSONResponse:
    record = reg.schema_by_id(schema_id, subject)
    body: dict[str, Any] = {}
    if record.schema_type != "AVRO":
        body["schemaType"] = record.schema_type
    if record.references:
        body["references"] = [r.to_json() for r in record.references]
    body["schema"] = _formatted(reg, record, format)
    return reply(body)


@router.get("/schemas/ids/{schema_id}/schema")
def by_id_text(
    schema_id: int,
    reg: Reg,
    subject: str | None = None,
) -> Response:
    return raw_schema(reg.schema_by_id(schema_id, subject).schema)


@router.get("/schemas/ids/{schema_id}/subjects")
def id_subjects(
    schema_id: int,
    reg: Reg,
    deleted: bool = False,
) -> JSONResponse:
    return reply(reg.subjects_for_id(schema_id, deleted))


@router.get("/schemas/ids/{schema_id}/versions")
def id_versions(
    schema_id: int,
    reg: Reg,
    deleted: bool = False,
) -> JSONResponse:
    return reply(reg.versions_for_id(schema_id, deleted))
