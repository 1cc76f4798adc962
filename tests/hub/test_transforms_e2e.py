"""Every transform and predicate end to end, through the REST API of one ``sluice up``.

One hub (tests/fixtures/hub.py's ``HubProcess``, module-scoped) serves every case. Each case
creates an ``http-webhook`` connector configured as a Kafka Connect user would (Java class
names for some transforms and predicates, short names for others, ``transforms.<t>.type``,
``predicate``/``negate``), posts JSON records to ``/ingest/<name>`` and reads the output
topic(s) from the broker with confluent-kafka, checking topic, key, value, headers and
timestamp. The webhook answers 200 only after the broker acknowledged every record of the
request (records a transform dropped included), so the topics are complete when the POST
returns: no sleeps, only deadlines on the connector start.

The path is the worker's source side: ``poll()`` -> transform chain -> converters -> producer.
Values and keys are schemaless JSON (``*.converter.schemas.enable=false``), headers go
through the default SimpleHeaderConverter (text on the wire).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import confluent_kafka as ck
import pytest

import hub.rest.app  # noqa: F401  (a broken import must fail the suite, not skip it)
from tests.fixtures import hub as hub_fixtures
from tests.fixtures.broker import wait_until

JAVA = "org.apache.kafka.connect.transforms."
PRED = "org.apache.kafka.connect.transforms.predicates."
TS = 1_700_000_000_123  # 2023-11-14T22:13:20.123Z
TS2 = 1_700_086_400_000  # 2023-11-15T22:13:20.000Z


@pytest.fixture(scope="module")
def shared_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One ``sluice up`` for the whole module (the ``hub`` fixture is one per test)."""
    data_dir: Path = tmp_path_factory.mktemp("transforms-e2e") / "hub"
    proc = hub_fixtures.HubProcess(data_dir, {"offset.flush.interval.ms": 1000})
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


Out = tuple[str, Any, Any, dict[str, str], int | None]  # topic, key, value, headers, timestamp


def run(
    hub: Any,
    transforms: dict[str, str],
    records: list[Any],
    *,
    topic: str | None = None,
    key_field: str | None = None,
    out_topics: list[str] | None = None,
) -> tuple[str, list[Out]]:
    """Creates a webhook connector with ``transforms``, posts ``records``, returns the input
    topic and every record of the output topics (the input topic unless ``out_topics``
    names them; ``{topic}`` is replaced) as (topic, key, value, headers, timestamp)."""
    name = f"smt-{uuid.uuid4().hex[:10]}"
    topic = (topic or "in-{id}").format(id=name)
    config = {
        "connector.class": "http-webhook",
        "tasks.max": "1",
        "topic": topic,
        "timestamp.field": "at",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "false",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        **transforms,
    }
    if key_field:
        config["key.field"] = key_field
    status, body = hub.request("POST", "/connectors", {"name": name, "config": config})
    assert status == 201, body
    try:

        def ingested() -> bool:
            status, body = hub.request("POST", f"/ingest/{name}", records)
            if status in (404, 503):  # the task is not running yet
                return False
            assert status == 200, (status, body, hub.log()[-3000:])
            return True

        try:
            wait_until(ingested, 20, f"{name} to accept the records")
        except AssertionError as exc:
            status = hub.request("GET", f"/connectors/{name}/status")[1]
            raise AssertionError(f"{exc}\nstatus: {json.dumps(status)[:3000]}") from None
        topics = [t.format(topic=topic) for t in (out_topics or [topic])]
        return topic, [r for t in topics for r in read_topic(hub.bootstrap, t)]
    finally:
        hub.request("DELETE", f"/connectors/{name}")


def read_topic(bootstrap: str, topic: str) -> list[Out]:
    """Every record of ``topic`` (all partitions, up to the high watermarks)."""
    consumer = ck.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"t-{uuid.uuid4().hex}",
         "enable.auto.commit": False, "auto.offset.reset": "earliest"}
    )  # fmt: skip
    try:
        meta = consumer.list_topics(topic, timeout=10).topics[topic]
        assert meta.error is None, f"{topic}: {meta.error}"
        ends = {}
        for p in meta.partitions:
            low, high = consumer.get_watermark_offsets(ck.TopicPartition(topic, p), timeout=10)
            if high > low:
                ends[p] = high
        consumer.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in ends])
        got: list[Out] = []
        done: dict[int, bool] = {p: False for p in ends}

        def drained() -> bool:
            for msg in consumer.consume(100, timeout=0.2):
                assert msg.error() is None, msg.error()
                got.append(decode(msg))
                if msg.offset() + 1 >= ends[msg.partition()]:
                    done[msg.partition()] = True
            return all(done.values())

        wait_until(drained, 20, f"all records of {topic}")
        return got
    finally:
        consumer.close()


def decode(msg: Any) -> Out:
    def load(raw: bytes | None) -> Any:
        return None if raw is None else json.loads(raw)

    headers = {k: (None if v is None else v.decode()) for k, v in msg.headers() or []}
    _, ts = msg.timestamp()
    return msg.topic(), load(msg.key()), load(msg.value()), headers, ts


def topic_has_no_records(hub: Any, topic: str) -> bool:
    consumer = ck.Consumer({"bootstrap.servers": hub.bootstrap, "group.id": "probe"})
    try:
        meta = consumer.list_topics(timeout=10)
        if topic not in meta.topics:
            return True
        return all(
            consumer.get_watermark_offsets(ck.TopicPartition(topic, p), timeout=10)[1] == 0
            for p in meta.topics[topic].partitions
        )
    finally:
        consumer.close()


# -- transforms on values, keys and headers ----------------------------------------------------


def test_cast_value_java_class_and_key_short_name(shared_hub: Any) -> None:
    topic, out = run(
        shared_hub,
        {"transforms": "castValue,castKey",
         "transforms.castValue.type": JAVA + "Cast$Value",
         "transforms.castValue.spec": "age:int32,score:string,flag:boolean,big:int8",
         "transforms.castKey.type": "Cast$Key",
         "transforms.castKey.spec": "string"},
        [{"id": 7, "age": "42", "score": 3.5, "flag": 1, "big": 300, "at": TS}],
        key_field="id",
    )  # fmt: skip
    assert out == [
        (topic, "7", {"id": 7, "age": 42, "score": "3.5", "flag": True, "big": 44, "at": TS},
         {}, TS)
    ]  # fmt: skip


def test_insert_header_literal_types_and_drop_headers(shared_hub: Any) -> None:
    topic, out = run(
        shared_hub,
        {"transforms": "h1,h2,h3,h4,drop",
         "transforms.h1.type": JAVA + "InsertHeader",
         "transforms.h1.header": "source",
         "transforms.h1.value.literal": "webhook",
         "transforms.h2.type": "InsertHeader",
         "transforms.h2.header": "version",
         "transforms.h2.value.literal": "1234",
         "transforms.h3.type": "InsertHeader",
         "transforms.h3.header": "flag",
         "transforms.h3.value.literal": "true",
         "transforms.h4.type": "InsertHeader",
         "transforms.h4.header": "tmp",
         "transforms.h4.value.literal": "x",
         "transforms.drop.type": JAVA + "DropHeaders",
         "transforms.drop.headers": "tmp, absent"},
        [{"id": 1, "at": TS}],
    )  # fmt: skip
    assert out == [
        (topic, None, {"id": 1, "at": TS},
         {"source": "webhook", "version": "1234", "flag": "true"}, TS)
    ]  # fmt: skip


@pytest.mark.parametrize("operation", ["move", "copy"])
def test_header_from_value(shared_hub: Any, operation: str) -> None:
    topic, out = run(
        shared_hub,
        {"transforms": "hf",
         "transforms.hf.type": JAVA + "HeaderFrom$Value",
         "transforms.hf.fields": "user,region",
         "transforms.hf.headers": "h_user,h_region",
         "transforms.hf.operation": operation},
        [{"id": 1, "user": "ann", "region": "eu", "at": TS}],
    )  # fmt: skip
    value = {"id": 1, "at": TS}
    if operation == "copy":
        value |= {"user": "ann", "region": "eu"}
    assert out == [(topic, None, value, {"h_user": "ann", "h_region": "eu"}, TS)]


def test_extract_field_value_v2_nested_path(shared_hub: Any) -> None:
    topic, out = run(
        shared_hub,
        {"transforms": "x",
         "transforms.x.type": JAVA + "ExtractField$Value",
         "transforms.x.field": "payload.order.total",
         "transforms.x.field.syntax.version": "V2"},
        [{"payload": {"order": {"total": 99.5}}, "at": TS},
         {"payload": {"order": {}}, "at": TS2}],
    )  # fmt: skip
    assert out == [(topic, None, 99.5, {}, TS), (topic, None, None, {}, TS2)]


def test_value_to_key_then_extract_field_key(shared_hub: Any) -> None:
    topic, out = run(
        shared_hub,
        {"transforms": "v2k,extract",
         "transforms.v2k.type": JAVA + "ValueToKey",
         "transforms.v2k.fields": "id,region",
         "transforms.extract.type": "ExtractField$Key",
         "transforms.extract.field": "id"},
        [{"id": 5, "region": "eu", "n": 1, "at": TS}],
    )  # fmt: skip
    assert out == [(topic, 5, {"id": 5, "region": "eu", "n": 1, "at": TS}, {}, TS)]


def test_value_to_key_struct_key(shared_hub: Any) -> None:
    topic, out = run(
        shared_hub,
        {"transforms": "v2k",
         "transforms.v2k.type": "ValueToKey",
         "transforms.v2k.fields": "region, id"},
        [{"id": 5, "region": "eu", "at": TS}],
    )  # fmt: skip
    assert out == [(topic, {"region": "eu", "id": 5}, {"id": 5, "region": "eu", "at": TS}, {}, TS)]


def test_flatten_value_custom_delimiter(shared_hub: Any) -> None:
    topic, out = run(
        shared_hub,
        {"transforms": "flat",
         "transforms.flat.type": JAVA + "Flatten$Value",
         "transforms.flat.delimiter": "_"},
        [{"id": 1, "addr": {"city": "Oslo", "geo": {"lat": 59.9}}, "tags": [1, 2], "at": TS}],
    )  # fmt: skip
    assert out == [
        (topic, None, {"id": 1, "addr_city": "Oslo", "addr_geo_lat": 59.9, "tags": [1, 2],
                       "at": TS}, {}, TS)
    ]  # fmt: skip


def test_hoist_field_value_and_key(shared_hub: Any) -> None:
    topic, out = run(
        shared_hub,
        {"transforms": "hv,hk",
         "transforms.hv.type": JAVA + "HoistField$Value",
         "transforms.hv.field": "wrapped",
         "transforms.hk.type": "HoistField$Key",
         "transforms.hk.field": "k"},
        [{"id": 3, "at": TS}],
        key_field="id",
    )  # fmt: skip
    assert out == [(topic, {"k": 3}, {"wrapped": {"id": 3, "at": TS}}, {}, TS)]


def test_insert_field_value_metadata_and_static(shared_hub: Any) -> None:
    topic, out = run(
        shared_hub,
        {"transforms": "ins",
         "transforms.ins.type": JAVA + "InsertField$Value",
         "transforms.ins.topic.field": "t",
         "transforms.ins.timestamp.field": "ts!",
         "transforms.ins.static.field": "origin",
         "transforms.ins.static.value": "web"},
        [{"id": 1, "at": TS}, None],
    )  # fmt: skip
    assert len(out) == 2
    assert out[0] == (topic, None, {"id": 1, "at": TS, "t": topic, "ts": TS, "origin": "web"},
                      {}, TS)  # fmt: skip
    assert out[1][:4] == (topic, None, None, {})  # a tombstone passes untouched


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        pytest.param({"fields": "ssn,age,ok,tags"},
                     {"id": 1, "ssn": "", "age": 0, "ok": False, "tags": [], "at": TS},
                     id="empty-values"),
        pytest.param({"fields": "ssn,age", "replacement": "9"},
                     {"id": 1, "ssn": "9", "age": 9, "ok": True, "tags": ["a"], "at": TS},
                     id="replacement"),
    ],
)  # fmt: skip
def test_mask_field_value(shared_hub: Any, settings: dict[str, str], expected: Any) -> None:
    transforms = {"transforms": "mask", "transforms.mask.type": "MaskField$Value"}
    transforms |= {f"transforms.mask.{k}": v for k, v in settings.items()}
    topic, out = run(
        shared_hub,
        transforms,
        [{"id": 1, "ssn": "123-45-6789", "age": 40, "ok": True, "tags": ["a"], "at": TS}],
    )
    assert out == [(topic, None, expected, {}, TS)]


@pytest.mark.parametrize(
    ("type_name", "settings", "expected"),
    [
        pytest.param(JAVA + "ReplaceField$Value", {"exclude": "secret", "renames": "name:full"},
                     {"id": 1, "full": "Ann", "n": 2, "at": TS}, id="exclude-renames"),
        pytest.param("ReplaceField", {"include": "id,name,at"},
                     {"id": 1, "name": "Ann", "at": TS}, id="include-short-name"),
        pytest.param("ReplaceField$Value", {"blacklist": "secret,n"},
                     {"id": 1, "name": "Ann", "at": TS}, id="deprecated-blacklist"),
    ],
)  # fmt: skip
def test_replace_field_value(
    shared_hub: Any, type_name: str, settings: dict[str, str], expected: Any
) -> None:
    transforms = {"transforms": "rf", "transforms.rf.type": type_name}
    transforms |= {f"transforms.rf.{k}": v for k, v in settings.items()}
    topic, out = run(
        shared_hub, transforms, [{"id": 1, "name": "Ann", "secret": "s", "n": 2, "at": TS}]
    )
    assert out == [(topic, None, expected, {}, TS)]


@pytest.mark.parametrize(
    ("settings", "field_in", "field_out"),
    [
        pytest.param({"target.type": "string", "format": "yyyy-MM-dd'T'HH:mm:ss.SSSX"},
                     TS, "2023-11-14T22:13:20.123Z", id="unix-ms-to-string"),
        pytest.param({"target.type": "unix", "format": "yyyy-MM-dd HH:mm:ss"},
                     "2023-11-14 22:13:20", 1_700_000_000_000, id="string-to-unix-ms"),
        pytest.param({"target.type": "unix", "format": "yyyy-MM-dd HH:mm:ss",
                      "unix.precision": "seconds"},
                     "2023-11-14 22:13:20", 1_700_000_000, id="string-to-unix-seconds"),
    ],
)  # fmt: skip
def test_timestamp_converter_value_field(
    shared_hub: Any, settings: dict[str, str], field_in: Any, field_out: Any
) -> None:
    transforms = {"transforms": "tc",
                  "transforms.tc.type": JAVA + "TimestampConverter$Value",
                  "transforms.tc.field": "when"}  # fmt: skip
    transforms |= {f"transforms.tc.{k}": v for k, v in settings.items()}
    topic, out = run(shared_hub, transforms, [{"id": 1, "when": field_in, "at": TS}])
    assert out == [(topic, None, {"id": 1, "when": field_out, "at": TS}, {}, TS)]


# -- routers --------------------------------------------------------------------------------------


def test_regex_router(shared_hub: Any) -> None:
    suffix = uuid.uuid4().hex[:8]
    topic, out = run(
        shared_hub,
        {"transforms": "route",
         "transforms.route.type": JAVA + "RegexRouter",
         "transforms.route.regex": r"orders-(\w+)-in",
         "transforms.route.replacement": "copy-$1-out"},
        [{"id": 1, "at": TS}],
        topic=f"orders-{suffix}-in",
        out_topics=[f"copy-{suffix}-out"],
    )  # fmt: skip
    assert out == [(f"copy-{suffix}-out", None, {"id": 1, "at": TS}, {}, TS)]
    assert topic_has_no_records(shared_hub, topic)


def test_timestamp_router(shared_hub: Any) -> None:
    topic, out = run(
        shared_hub,
        {"transforms": "byDay",
         "transforms.byDay.type": "TimestampRouter",
         "transforms.byDay.topic.format": "${topic}_${timestamp}",
         "transforms.byDay.timestamp.format": "yyyyMMdd"},
        [{"id": 1, "at": TS}, {"id": 2, "at": TS2}],
        out_topics=["{topic}_20231114", "{topic}_20231115"],
    )  # fmt: skip
    assert out == [
        (f"{topic}_20231114", None, {"id": 1, "at": TS}, {}, TS),
        (f"{topic}_20231115", None, {"id": 2, "at": TS2}, {}, TS2),
    ]
    assert topic_has_no_records(shared_hub, topic)


# -- Filter and the predicates -------------------------------------------------------------------


def test_filter_tombstones_with_record_is_tombstone(shared_hub: Any) -> None:
    topic, out = run(
        shared_hub,
        {"transforms": "dropTombstones",
         "transforms.dropTombstones.type": JAVA + "Filter",
         "transforms.dropTombstones.predicate": "isTombstone",
         "predicates": "isTombstone",
         "predicates.isTombstone.type": PRED + "RecordIsTombstone"},
        [{"id": 1, "at": TS}, None, {"id": 2, "at": TS}, None],
    )  # fmt: skip
    assert out == [
        (topic, None, {"id": 1, "at": TS}, {}, TS),
        (topic, None, {"id": 2, "at": TS}, {}, TS),
    ]


def test_filter_negated_has_header_key(shared_hub: Any) -> None:
    """Tombstones get a header (InsertHeader under RecordIsTombstone); Filter with a negated
    HasHeaderKey then drops every record without it: only the tombstones remain."""
    topic, out = run(
        shared_hub,
        {"transforms": "mark,keepMarked",
         "transforms.mark.type": "InsertHeader",
         "transforms.mark.header": "deleted",
         "transforms.mark.value.literal": "yes",
         "transforms.mark.predicate": "tomb",
         "transforms.keepMarked.type": "Filter",
         "transforms.keepMarked.predicate": "hasDeleted",
         "transforms.keepMarked.negate": "true",
         "predicates": "tomb,hasDeleted",
         "predicates.tomb.type": "RecordIsTombstone",
         "predicates.hasDeleted.type": PRED + "HasHeaderKey",
         "predicates.hasDeleted.name": "deleted"},
        [{"id": 1, "at": TS}, None, {"id": 2, "at": TS}],
    )  # fmt: skip
    assert [r[:4] for r in out] == [(topic, None, None, {"deleted": "yes"})]


def test_topic_name_matches_is_a_full_match(shared_hub: Any) -> None:
    """``orders-.*`` matches the topic: the mask applies. ``orders`` only matches a prefix of
    it: the hoist does not apply. A negated non-match applies the cast."""
    topic, out = run(
        shared_hub,
        {"transforms": "mask,hoist,cast",
         "transforms.mask.type": "MaskField$Value",
         "transforms.mask.fields": "ssn",
         "transforms.mask.predicate": "isOrders",
         "transforms.mask.negate": "false",
         "transforms.hoist.type": "HoistField$Value",
         "transforms.hoist.field": "wrapped",
         "transforms.hoist.predicate": "prefixOnly",
         "transforms.cast.type": "Cast$Value",
         "transforms.cast.spec": "n:string",
         "transforms.cast.predicate": "prefixOnly",
         "transforms.cast.negate": "true",
         "predicates": "isOrders,prefixOnly",
         "predicates.isOrders.type": PRED + "TopicNameMatches",
         "predicates.isOrders.pattern": "orders-.*",
         "predicates.prefixOnly.type": "TopicNameMatches",
         "predicates.prefixOnly.pattern": "orders"},
        [{"ssn": "123", "n": 1, "at": TS}],
        topic="orders-{id}",
    )  # fmt: skip
    assert out == [(topic, None, {"ssn": "", "n": "1", "at": TS}, {}, TS)]


def test_invalid_chain_is_a_400_naming_every_key(shared_hub: Any) -> None:
    name = f"smt-bad-{uuid.uuid4().hex[:8]}"
    config = {
        "connector.class": "http-webhook",
        "topic": "never",
        "transforms": "route,mask",
        "transforms.route.type": JAVA + "RegexRouter",
        "transforms.route.replacement": "x",
        "transforms.mask.type": "MaskField$Value",
        "transforms.mask.predicate": "isOrders",
        "predicates": "isOrders",
        "predicates.isOrders.type": "NoSuchPredicate",
    }
    status, body = shared_hub.request("POST", "/connectors", {"name": name, "config": config})
    assert status == 400, body
    message = json.dumps(body)
    for key in ("transforms.route.regex", "transforms.mask.fields", "predicates.isOrders.type"):
        assert key in message, message
    assert shared_hub.request("GET", f"/connectors/{name}")[0] == 404
