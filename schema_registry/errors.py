"""Errors the registry answers with, carrying Confluent Schema Registry's HTTP status and code.

Existing clients branch on ``error_code`` (confluent-kafka raises ``SchemaRegistryError`` with
it, the Java client maps 40401/40403 to "not found"), so every failure a request can meet is a
``RegistryError`` with the code and message text Confluent uses; the REST layer writes it as
``{"error_code": ..., "message": ...}`` with the matching status.

Tree::

    RegistryError                          (status, error_code)
    ├── BadRequest                         400/400: the body is empty, not JSON, or not an
    │                                           object (Confluent answers Jackson's errors so)
    ├── NotFound                           404: 40401 subject, 40402 version, 40403 schema,
    │                                           40404/40406 soft deleted, 40405/40407 not
    │                                           soft deleted first, 40408/40409 no subject config
    ├── Incompatible                       409/40901: fails the subject's compatibility level
    ├── Unprocessable                      422: 42201 invalid schema, 42202 invalid version,
    │                                           42203 compatibility level, 42204 mode,
    │                                           42205 operation not permitted, 42206 reference
    │                                           exists, 42207 id does not match, 42208 subject
    ├── Unauthorized                       401/40101: missing or wrong credentials
    └── StoreError                         500: 50001 store, 50002 timeout
"""

from __future__ import annotations


class RegistryError(Exception):
    status = 500
    error_code = 50001

    def __init__(self, message: str, error_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if error_code is not None:
            self.error_code = error_code

    def to_json(self) -> dict[str, object]:
        return {"error_code": self.error_code, "message": self.message}


class BadRequest(RegistryError):
    status = 400
    error_code = 400


class NotFound(RegistryError):
    status = 404
    error_code = 40401


class Incompatible(RegistryError):
    status = 409
    error_code = 40901


class Unprocessable(RegistryError):
    status = 422
    error_code = 42201


class StoreError(RegistryError):
    status = 500
    error_code = 50001


class Unauthorized(RegistryError):
    status = 401
    error_code = 40101


class InvalidSchema(Unprocessable):
    """The schema text does not parse as its type, or a reference cannot be resolved."""

    error_code = 42201


# Constructors named after Confluent's messages, so every site says the same thing.


def subject_not_found(subject: str) -> NotFound:
    return NotFound(f"Subject '{subject}' not found.", 40401)


def version_not_found(version: int | str) -> NotFound:
    return NotFound(f"Version {version} not found.", 40402)


def schema_not_found(schema_id: int | None = None) -> NotFound:
    return NotFound(
        "Schema not found" if schema_id is None else f"Schema {schema_id} not found", 40403
    )


def subject_soft_deleted(subject: str) -> NotFound:
    return NotFound(
        f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently", 40404
    )


def subject_not_soft_deleted(subject: str) -> NotFound:
    return NotFound(
        f"Subject '{subject}' was not deleted first before being permanently deleted", 40405
    )


def version_soft_deleted(subject: str, version: int) -> NotFound:
    return NotFound(
        f"Subject '{subject}' Version {version} was soft deleted.Set permanent=true to delete "
        "permanently",
        40406,
    )


def version_not_soft_deleted(subject: str, version: int) -> NotFound:
    return NotFound(
        f"Subject '{subject}' Version {version} was not deleted first before being permanently "
        "deleted",
        40407,
    )


def no_subject_compatibility(subject: str) -> NotFound:
    return NotFound(
        f"Subject '{subject}' does not have subject-level compatibility configured", 40408
    )


def no_subject_mode(subject: str) -> NotFound:
    return NotFound(f"Subject '{subject}' does not have subject-level mode configured", 40409)


def invalid_version(version: str) -> Unprocessable:
    return Unprocessable(
        f"The specified version '{version}' is not a valid version id. Allowed values are "
        'between [1, 2^31-1] and the string "latest"',
        42202,
    )


def invalid_compatibility(level: object = None) -> Unprocessable:
    return Unprocessable(
        "Invalid compatibility level. Valid values are none, backward, forward, full, "
        "backward_transitive, forward_transitive, and full_transitive",
        42203,
    )


def invalid_mode() -> Unprocessable:
    return Unprocessable(
        "Invalid mode. Valid values are READWRITE, READONLY, IMPORT and FORWARD.", 42204
    )


def not_permitted(message: str) -> Unprocessable:
    return Unprocessable(message, 42205)


def reference_exists(what: str) -> Unprocessable:
    return Unprocessable(f"One or more references exist to the schema {what}.", 42206)


def id_does_not_match(message: str = "") -> Unprocessable:
    return Unprocessable(
        message or "The ID of an imported schema does not match the existing ID", 42207
    )


def invalid_subject(subject: str) -> Unprocessable:
    return Unprocessable(f"The specified subject '{subject}' is not a valid.", 42208)
