"""``/subjects``: register, look up, list, read and delete subject versions."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, Response

from schema_registry.registry import SchemaRegistry, SchemaRequest
from schema_registry.rest._common import JsonBody, Reg, raw_schema, reply

router = APIRouter(tags=["subjects"])


@router.get("/subjects")
def list_subjects(
    reg: Reg,
    subject_prefix: Annotated[str, Query(alias="subjectPrefix")] = "",
    deleted: bool = False,
    deleted_only: Annotated[bool, Query(alias="deletedOnly")] = False,
) -> JSONResponse:
    return reply(reg.subjects(subject_prefix, deleted, deleted_only))


@router.get("/subjects/{subject}/versions")
def list_versions(
    subject: str,
    reg: Reg,
    deleted: bool = False,
    deleted_only: Annotated[bool, Query(alias="deletedOnly")] = False,
) -> JSONResponse:
    return reply(reg.versions(subject, deleted, deleted_only))


@router.post("/subjects/{subject}/versions")
def register(
    subject: str,
    body: JsonBody,
    reg: Reg,
    normalize: bool = False,
) -> JSONResponse:
    record = reg.register(subject, SchemaRequest.from_json(body))
    return reply({"id": record.id})


@router.post("/subjects/{subject}")
def lookup(
    subject: str,
    body: JsonBody,
    reg: Reg,
    normalize: bool = False,
    deleted: bool = False,
) -> JSONResponse:
    return reply(reg.lookup(subject, SchemaRequest.from_json(body), deleted).response())


@router.get("/subjects/{subject}/versions/{version}")
def get_version(
    subject: str,
    version: str,
    reg: Reg,
    deleted: bool = False,
    format: str = "",
) -> JSONResponse:
    record = reg.version(subject, version, deleted)
    body = record.response()
    body["schema"] = _formatted(reg, record, format)
    return reply(body)


@router.get("/subjects/{subject}/versions/{version}/schema")
def get_version_schema(
    subject: str,
    version: str,
    reg: Reg,
    deleted: bool = False,
) -> Response:
    return raw_schema(reg.version(subject, version, deleted).schema)


@router.get("/subjects/{subject}/versions/{version}/referencedby")
def referenced_by(
    subject: str,
    version: str,
    reg: Reg,
) -> JSONResponse:
    return reply(reg.referenced_by(subject, version))


@router.delete("/subjects/{subject}")
def delete_subject(
    subject: str,
    reg: Reg,
    permanent: bool = False,
) -> JSONResponse:
    return reply(reg.delete_subject(subject, permanent))


@router.delete("/subjects/{subject}/versions/{version}")
def delete_version(
    subject: str,
    version: str,
    reg: Reg,
    permanent: bool = False,
) -> JSONResponse:
    return reply(reg.delete_version(subject, version, permanent))


def _formatted(
    reg: SchemaRegistry,
    record: Any,
    fmt: str,
) -> str:
    """``format=serialized`` gives a Protobuf schema as base64 of its FileDescriptorProto (what
    confluent-kafka's deserializer asks for); other formats and types give the stored text."""
    if fmt.lower() == "serialized" and record.schema_type == "PROTOBUF":
        return str(reg.parsed_record(record).serialized())  # type: ignore[attr-defined]
    return str(record.schema)
