"""The registry's decisions (versions, ids, deletes, modes, error codes) over an in-memory log.

The log here is a list standing in for the ``_schemas`` topic so that each rule is checked in
microseconds; ``test_server.py`` and ``test_confluent_clients.py`` run the same code over the
real topic on a real broker.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import pytest

from schema_registry import errors
from schema_registry.registry import SchemaRegistry, SchemaRequest
from schema_registry.state import RegistryState


class ListLog:
    def __init__(self, state: RegistryState) -> None:
        self.records: list[tuple[bytes, bytes | None]] = []
        self.state = state
        self.applied = 0

    def send(self, records: Iterable[tuple[bytes, bytes | None]]) -> None:
        self.records += list(records)

    def read_to_end(self) -> None:
        while self.applied < len(self.records):
            self.state.apply(*self.records[self.applied])
            self.applied += 1


@pytest.fixture
def reg() -> SchemaRegistry:
    state = RegistryState()
    return SchemaRegistry(ListLog(state), state)


def avro(*fields: str) -> SchemaRequest:
    schema = {"type": "record", "name": "R", "fields": [{"name": f, "type": "string",
              "default": ""} for f in fields]}  # fmt: skip
    return SchemaRequest(json.dumps(schema))


def code(exc: pytest.ExceptionInfo[errors.RegistryError]) -> tuple[int, int]:
    return exc.value.status, exc.value.error_code


def test_versions_and_ids(reg: SchemaRegistry) -> None:
    first = reg.register("a-value", avro("x"))
    assert (first.version, first.id) == (1, 1)
    assert reg.register("a-value", avro("x")).version == 1  # same schema: same version
    second = reg.register("a-value", avro("x", "y"))
    assert (second.version, second.id) == (2, 2)
    shared = reg.register("b-value", avro("x"))
    assert (shared.version, shared.id) == (1, 1)  # the same schema keeps its id everywhere
    assert reg.subjects() == ["a-value", "b-value"]
    assert reg.subjects_for_id(1) == ["a-value", "b-value"]
    assert reg.version("a-value", "latest").version == 2
    assert reg.lookup("a-value", avro("x")).version == 1


def test_error_codes(reg: SchemaRegistry) -> None:
    reg.register("a-value", avro("x"))
    cases = [
        (lambda: reg.versions("nope"), (404, 40401)),
        (lambda: reg.version("a-value", 7), (404, 40402)),
        (lambda: reg.version("a-value", "zero"), (422, 42202)),
        (lambda: reg.version("a-value", 0), (422, 42202)),
        (lambda: reg.schema_by_id(99), (404, 40403)),
        (lambda: reg.lookup("a-value", avro("q")), (404, 40403)),
        (lambda: reg.register("a-value", SchemaRequest("{bad")), (422, 42201)),
        (lambda: reg.set_compatibility(None, "SIDEWAYS"), (422, 42203)),
        (lambda: reg.set_mode(None, "SOMETIMES"), (422, 42204)),
        (lambda: reg.delete_mode("a-value"), (404, 40409)),
    ]
    for call, expected in cases:
        with pytest.raises(errors.RegistryError) as exc:
            call()
        assert code(exc) == expected, exc.value.message


def test_incompatible_change_is_409_40901(reg: SchemaRegistry) -> None:
    reg.register("a-value", avro("x"))
    required = {"type": "record", "name": "R", "fields": [
        {"name": "x", "type": "string"}, {"name": "y", "type": "int"}]}  # fmt: skip
    with pytest.raises(errors.Incompatible) as exc:
        reg.register("a-value", SchemaRequest(json.dumps(required)))
    assert code(exc) == (409, 40901)
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in exc.value.message
    reg.set_compatibility("a-value", "NONE")
    assert reg.register("a-value", SchemaRequest(json.dumps(required))).version == 2
    reg.delete_compatibility("a-value")
    assert reg.compatibility_level("a-value") == "BACKWARD"


def test_soft_then_hard_delete(reg: SchemaRegistry) -> None:
    reg.register("a-value", avro("x"))
    reg.register("a-value", avro("x", "y"))
    with pytest.raises(errors.NotFound) as exc:
        reg.delete_subject("a-value", permanent=True)
    assert code(exc) == (404, 40405)
    assert reg.delete_subject("a-value") == [1, 2]
    with pytest.raises(errors.NotFound) as exc:
        reg.delete_subject("a-value")
    assert code(exc) == (404, 40404)
    assert reg.subjects() == [] and reg.subjects(deleted=True) == ["a-value"]
    assert reg.versions("a-value", deleted=True) == [1, 2]
    assert reg.schema_by_id(2).deleted  # ids still resolve for consumers of old data
    again = reg.register("a-value", avro("x"))
    assert (again.version, again.id) == (3, 1)  # versions keep counting, ids are reused
    # as in Confluent, the soft-deleted version 1 with the same id is dropped on re-register
    assert reg.versions("a-value", deleted=True) == [2, 3]
    reg.delete_version("a-value", 3)
    assert reg.delete_subject("a-value", permanent=True) == [2, 3]
    with pytest.raises(errors.NotFound):
        reg.schema_by_id(2)
    assert reg.register("a-value", avro("z")).version == 1


def test_version_delete_rules(reg: SchemaRegistry) -> None:
    reg.register("a-value", avro("x"))
    with pytest.raises(errors.NotFound) as exc:
        reg.delete_version("a-value", 1, permanent=True)
    assert code(exc) == (404, 40407)
    assert reg.delete_version("a-value", "latest") == 1
    with pytest.raises(errors.NotFound) as exc:
        reg.delete_version("a-value", 1)
    assert code(exc) == (404, 40406)
    assert reg.delete_version("a-value", 1, permanent=True) == 1


def test_references_block_deletes(reg: SchemaRegistry) -> None:
    address = {"type": "record", "name": "Address", "fields": [{"name": "c", "type": "string"}]}
    reg.register("address", SchemaRequest(json.dumps(address)))
    user = {"type": "record", "name": "User", "fields": [{"name": "a", "type": "Address"}]}
    body = {"schema": json.dumps(user),
            "references": [{"name": "Address", "subject": "address", "version": 1}]}  # fmt: skip
    record = reg.register("user", SchemaRequest.from_json(body))
    assert reg.referenced_by("address", 1) == [record.id]
    with pytest.raises(errors.Unprocessable) as exc:
        reg.delete_subject("address")
    assert code(exc) == (422, 42206)
    bad = {**body, "references": [{"name": "Address", "subject": "address", "version": 9}]}
    with pytest.raises(errors.InvalidSchema):
        reg.register("user", SchemaRequest.from_json(bad))


def test_modes(reg: SchemaRegistry) -> None:
    reg.register("a-value", avro("x"))
    reg.set_mode("a-value", "READONLY")
    with pytest.raises(errors.Unprocessable) as exc:
        reg.register("a-value", avro("x", "y"))
    assert code(exc) == (422, 42205)
    with pytest.raises(errors.Unprocessable):
        reg.set_mode(None, "IMPORT")  # subjects exist: needs force
    reg.set_mode(None, "IMPORT", force=True)
    reg.delete_mode("a-value")
    imported = reg.register("imp", SchemaRequest(avro("q").schema, id=42, version=5))
    assert (imported.id, imported.version) == (42, 5)
    with pytest.raises(errors.Unprocessable) as exc:  # id 42 belongs to another schema
        reg.register("imp2", SchemaRequest(avro("other").schema, id=42, version=1))
    assert code(exc) == (422, 42207)
    reg.set_mode(None, "READWRITE")
    with pytest.raises(errors.Unprocessable):  # ids are chosen by the registry outside IMPORT
        reg.register("imp", SchemaRequest(avro("q", "r").schema, id=50))
    assert reg.register("fresh", avro("n")).id == 43  # after the imported ids


def test_compatibility_endpoint_logic(reg: SchemaRegistry) -> None:
    reg.register("a-value", avro("x"))
    assert reg.check_compatibility("a-value", "latest", avro("x", "y")) == []
    breaking = SchemaRequest(json.dumps({"type": "record", "name": "R", "fields": [
        {"name": "x", "type": "int"}]}))  # fmt: skip
    assert reg.check_compatibility("a-value", 1, breaking)
    assert reg.check_compatibility("new-subject", "latest", breaking) == []
    with pytest.raises(errors.NotFound):
        reg.check_compatibility("a-value", 4, breaking)


def test_state_rebuilds_from_the_log(reg: SchemaRegistry) -> None:
    reg.register("a-value", avro("x"))
    reg.register("a-value", avro("x", "y"))
    reg.set_compatibility("a-value", "FULL")
    reg.delete_subject("a-value")
    replay = RegistryState()
    for key, value in reg.log.records:  # type: ignore[attr-defined]
        replay.apply(key, value)
    assert replay.versions == reg.state.versions
    assert replay.max_id == 2 and replay.configs == reg.state.configs
