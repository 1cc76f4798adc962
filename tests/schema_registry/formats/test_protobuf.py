"""Protobuf: protoc parsing, the base64 descriptor form, and Confluent's diff rules."""

from __future__ import annotations

import pytest

from schema_registry.compatibility import check
from schema_registry.errors import InvalidSchema
from schema_registry.formats import protobuf
from schema_registry.formats._proto_text import print_file

BASE = """
syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
message Order {
  string id = 1;
  int32 qty = 2;
  google.protobuf.Timestamp at = 3;
  map<string, string> tags = 4;
  repeated int64 lines = 5;
  oneof pay { string card = 6; string iban = 7; }
  enum Kind { KIND_UNSPECIFIED = 0; SHOP = 1; }
  Kind kind = 8;
  Item item = 9;
  int32 extra1 = 10;
  int32 extra2 = 11;
}
message Item { string sku = 1; }
message Audit { string who = 1; }
"""


def parse(text: str) -> protobuf.ProtobufSchema:
    return protobuf.parse(text, {})


def evolve(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new)


@pytest.mark.parametrize(
    ("change", "ok"),
    [
        (("string id = 1;", "string id = 1; string note = 12;"), True),  # FIELD_ADDED
        (("int32 qty = 2;", ""), True),  # FIELD_REMOVED
        (("int32 qty = 2;", "int32 quantity = 2;"), True),  # FIELD_NAME_CHANGED
        (("int32 qty = 2;", "int64 qty = 2;"), True),  # same varint class
        (("int32 qty = 2;", "string qty = 2;"), False),  # FIELD_SCALAR_KIND_CHANGED
        (("int32 qty = 2;", "sint32 qty = 2;"), False),  # zigzag is another wire class
        (("repeated int64 lines = 5;", "optional int64 lines = 5;"), False),  # numeric label
        (("string id = 1;", "repeated string id = 1;"), True),  # string label change
        (("Item item = 9;", "google.protobuf.Timestamp item = 9;"), False),  # named type
        (("message Item { string sku = 1; }", "message Item { int32 sku = 1; }"), False),
        (("message Audit { string who = 1; }", ""), False),  # MESSAGE_REMOVED
        (("SHOP = 1;", "SHOP = 1; ONLINE = 2;"), True),  # ENUM_CONST_ADDED
        (("package shop;", "package store;"), False),  # PACKAGE_CHANGED
        (
            (
                "int32 extra1 = 10;\n  int32 extra2 = 11;",
                "oneof grp { int32 extra1 = 10; int32 extra2 = 11; }",
            ),
            False,
        ),
        (
            (
                "oneof pay { string card = 6; string iban = 7; }",
                "string card = 6; string iban = 7;",
            ),
            True,
        ),
    ],
)
def test_backward_rules(change: tuple[str, str], ok: bool) -> None:
    old, new = parse(BASE), parse(evolve(*change))
    problems = check("BACKWARD", new, [(1, old)])
    assert (problems == []) is ok, problems


def test_syntax_errors_carry_protoc_messages() -> None:
    with pytest.raises(InvalidSchema, match="not defined"):
        parse('syntax = "proto3"; message X { strin a = 1; }')


def test_serialized_form_round_trips_to_the_same_text() -> None:
    text_form = parse(BASE)
    from_base64 = protobuf.parse(text_form.serialized(), {})
    assert from_base64.source is not None  # printed back to .proto text
    assert from_base64.equivalent(text_form)
    assert from_base64.canonical == print_file(text_form.descriptor)


def test_references_resolve_imports() -> None:
    item = parse('syntax = "proto3"; package shop; message Item { string sku = 1; }')
    order = 'syntax = "proto3"; package shop; import "item.proto"; message O { Item i = 1; }'
    with pytest.raises(InvalidSchema):
        parse(order)
    parsed = protobuf.parse(order, {"item.proto": item})
    assert "item.proto" in parsed.dependencies


def test_confluent_builtin_imports_are_available() -> None:
    parsed = parse(
        'syntax = "proto3"; import "confluent/type/decimal.proto"; '
        'import "google/type/date.proto"; message M { confluent.type.Decimal d = 1; '
        "google.type.Date day = 2; }"
    )
    assert {"confluent/type/decimal.proto", "google/type/date.proto"} <= set(parsed.dependencies)
