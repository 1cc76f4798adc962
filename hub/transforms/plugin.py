"""Registers the built-in transforms and predicates through the public hooks."""

from __future__ import annotations

from typing import Any

from hub.api import Predicate, Transformation
from hub.plugins import hookimpl
from hub.transforms.cast import Cast
from hub.transforms.debezium.extract_new_record_state import ExtractNewRecordState
from hub.transforms.debezium.outbox import EventRouter
from hub.transforms.extract_field import ExtractField
from hub.transforms.filter import Filter
from hub.transforms.flatten import Flatten
from hub.transforms.headers import DropHeaders, HeaderFrom, InsertHeader
from hub.transforms.hoist_field import HoistField
from hub.transforms.insert_field import InsertField
from hub.transforms.mask_field import MaskField
from hub.transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches
from hub.transforms.replace_field import ReplaceField
from hub.transforms.routers import RegexRouter, TimestampRouter
from hub.transforms.set_schema_metadata import SetSchemaMetadata
from hub.transforms.timestamp_converter import TimestampConverter
from hub.transforms.value_to_key import ValueToKey

TRANSFORMS: tuple[type[Transformation[Any]], ...] = (
    Cast,
    DropHeaders,
    ExtractField,
    Filter,
    Flatten,
    HeaderFrom,
    HoistField,
    InsertField,
    InsertHeader,
    MaskField,
    RegexRouter,
    ReplaceField,
    SetSchemaMetadata,
    TimestampConverter,
    TimestampRouter,
    ValueToKey,
    ExtractNewRecordState,
    EventRouter,
)
PREDICATES: tuple[type[Predicate[Any]], ...] = (TopicNameMatches, HasHeaderKey, RecordIsTombstone)


@hookimpl
def sluice_transforms() -> list[type[Transformation[Any]]]:
    return list(TRANSFORMS)


@hookimpl
def sluice_predicates() -> list[type[Predicate[Any]]]:
    return list(PREDICATES)
