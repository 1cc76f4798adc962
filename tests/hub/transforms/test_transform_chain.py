"""TransformChain.from_config: Kafka Connect keys, predicates, negate, errors by full key."""

from __future__ import annotations

import pytest

from hub.api import ConfigError, Header, SinkRecord, SourceRecord
from hub.plugins.manager import create_plugin_manager
from hub.plugins.registry import PluginRegistry
from hub.transforms.chain import TransformChain
from tests.plugins import sample_plugin

J = "org.apache.kafka.connect.transforms."


def test_empty_config_is_an_identity_chain(registry: PluginRegistry) -> None:
    c = TransformChain.from_config({"name": "x", "transforms": ""}, registry)
    record = SourceRecord(topic="t", value=1)
    assert len(c) == 0 and c.apply(record) is record


def test_kafka_connect_style_chain_in_order(registry: PluginRegistry) -> None:
    config = {
        "transforms": "hoist, route ,insert",
        "transforms.hoist.type": J + "HoistField$Value",
        "transforms.hoist.field": "line",
        "transforms.route.type": J + "RegexRouter",
        "transforms.route.regex": "(.*)",
        "transforms.route.replacement": "$1-copy",
        "transforms.insert.type": "InsertField$Value",
        "transforms.insert.topic.field": "topic",
    }
    c = TransformChain.from_config(config, registry)
    out = c.apply(SourceRecord(topic="logs", value="hello"))
    assert out is not None
    assert out.topic == "logs-copy"
    assert out.value == {"line": "hello", "topic": "logs-copy"}  # insert saw the new topic


def test_predicates_and_negate(registry: PluginRegistry) -> None:
    config = {
        "transforms": "dropTombstones,tag",
        "transforms.dropTombstones.type": J + "Filter",
        "transforms.dropTombstones.predicate": "isTombstone",
        "transforms.tag.type": "InsertHeader",
        "transforms.tag.header": "seen",
        "transforms.tag.value.literal": "yes",
        "transforms.tag.predicate": "isOrders",
        "transforms.tag.negate": "true",
        "predicates": "isTombstone,isOrders",
        "predicates.isTombstone.type": J + "predicates.RecordIsTombstone",
        "predicates.isOrders.type": "TopicNameMatches",
        "predicates.isOrders.pattern": "orders.*",
    }
    c = TransformChain.from_config(config, registry)
    assert c.apply(SourceRecord(topic="users", key="k", value=None)) is None
    out = c.apply(SinkRecord(topic="users", value=1, offset=5))
    assert out is not None and out.headers == (Header("seen", "yes", out.headers[0].schema),)
    orders = SinkRecord(topic="orders", value=1)
    assert c.apply(orders) is orders  # negated predicate: tag skipped


def test_key_variant_from_java_name(registry: PluginRegistry) -> None:
    c = TransformChain.from_config(
        {
            "transforms": "k",
            "transforms.k.type": J + "ExtractField$Key",
            "transforms.k.field": "id",
        },
        registry,
    )
    out = c.apply(SourceRecord(topic="t", key={"id": 7}, value={"id": 8}))
    assert out is not None and out.key == 7 and out.value == {"id": 8}


def test_all_errors_reported_with_full_keys(registry: PluginRegistry) -> None:
    config = {
        "transforms": "a,b,c,d,e,a",
        "transforms.a.type": "NoSuchTransform",
        "transforms.c.type": "Cast$Value",
        "transforms.c.spec": "x:int99",
        "transforms.d.type": "RegexRouter",
        "transforms.d.regex": "(",
        "transforms.d.replacement": "x",
        "transforms.d.predicate": "undeclared",
        "transforms.e.type": "Filter",
        "transforms.e.negate": "sometimes",
        "predicates": "p,q",
        "predicates.p.type": "TopicNameMatches",
        "predicates.q.type": "NoSuchPredicate",
    }
    with pytest.raises(ConfigError) as exc:
        TransformChain.from_config(config, registry)
    errors = exc.value.errors
    assert set(errors) == {
        "transforms",
        "transforms.a.type",
        "transforms.b.type",
        "transforms.c.spec",
        "transforms.d.regex",
        "transforms.d.predicate",
        "transforms.e.negate",
        "predicates.p.pattern",
        "predicates.q.type",
    }
    assert "duplicate aliases: a" in errors["transforms"][0]
    assert errors["transforms.b.type"] == ["Missing required configuration"]
    assert "NoSuchTransform" in errors["transforms.a.type"][0]
    assert "'undeclared' is not listed" in errors["transforms.d.predicate"][0]


def test_negate_without_predicate_is_an_error(registry: PluginRegistry) -> None:
    with pytest.raises(ConfigError) as exc:
        TransformChain.from_config(
            {"transforms": "f", "transforms.f.type": "Filter", "transforms.f.negate": "true"},
            registry,
        )
    assert exc.value.errors == {"transforms.f.negate": ["negate needs a predicate"]}


def test_third_party_transform_and_predicate_in_a_chain() -> None:
    registry = create_plugin_manager([sample_plugin], load_entrypoints=False)
    config = {
        "transforms": "up,drop",
        "transforms.up.type": "com.example.Uppercase",
        "transforms.up.field": "name",
        "transforms.drop.type": "Filter",
        "transforms.drop.predicate": "even",
        "predicates": "even",
        "predicates.even.type": "IsEven",
    }
    c = TransformChain.from_config(config, registry)
    out = c.apply(SourceRecord(topic="t", value={"name": "ann"}))
    assert out is not None and out.value == {"name": "ANN"}
    del config["transforms.up.field"]
    with pytest.raises(ConfigError) as exc:
        TransformChain.from_config(config, registry)
    assert exc.value.errors == {"transforms.up.field": ["Missing required configuration"]}


def test_close_survives_a_failing_transform(registry: PluginRegistry) -> None:
    c = TransformChain.from_config({"transforms": "f", "transforms.f.type": "Filter"}, registry)

    def boom() -> None:
        raise RuntimeError("close failed")

    c.steps[0].transform.close = boom  # type: ignore[method-assign]
    c.close()


def test_any_registry_with_the_contract_dict_methods_works(registry: PluginRegistry) -> None:
    class DictOnly:
        def transforms(self) -> dict[str, type]:
            return registry.transforms()

        def predicates(self) -> dict[str, type]:
            return registry.predicates()

    c = TransformChain.from_config(
        {"transforms": "h", "transforms.h.type": J + "HoistField$Key", "transforms.h.field": "k"},
        DictOnly(),
    )
    out = c.apply(SourceRecord(topic="t", key=1))
    assert out is not None and out.key == {"k": 1}


JAVA_CONFIGS: list[tuple[str, dict[str, str]]] = [
    ("Cast$Value", {"spec": "n:string"}),
    ("DropHeaders", {"headers": "h"}),
    ("ExtractField$Value", {"field": "n"}),
    ("Filter", {}),
    ("Flatten$Value", {"delimiter": "_"}),
    ("HeaderFrom$Value", {"fields": "n", "headers": "h", "operation": "copy"}),
    ("HoistField$Key", {"field": "k"}),
    ("InsertField$Value", {"topic.field": "topic"}),
    ("InsertHeader", {"header": "h", "value.literal": "1"}),
    ("MaskField$Value", {"fields": "n"}),
    ("RegexRouter", {"regex": "t", "replacement": "u"}),
    ("ReplaceField$Value", {"exclude": "n"}),
    ("TimestampConverter$Value", {"field": "ts", "target.type": "unix"}),
    ("TimestampRouter", {}),
    ("ValueToKey", {"fields": "n"}),
]


@pytest.mark.parametrize(("type_name", "settings"), JAVA_CONFIGS)
def test_every_transform_from_its_java_class_name(
    registry: PluginRegistry, type_name: str, settings: dict[str, str]
) -> None:
    config = {"transforms": "x", "transforms.x.type": J + type_name}
    config.update({f"transforms.x.{k}": v for k, v in settings.items()})
    chain = TransformChain.from_config(config, registry)
    record = SourceRecord(topic="t", key=1, value={"n": 1, "ts": 5}, timestamp=0)
    out = chain.apply(record)
    assert (out is None) == (type_name == "Filter")


def test_every_java_transform_is_covered(registry: PluginRegistry) -> None:
    """Every transform standing in for one of Kafka's (Debezium's, and SetSchemaMetadata,
    which needs a schema, by their Java names in test_debezium_transforms.py)."""
    covered = {name.split("$")[0] for name, _ in JAVA_CONFIGS} | {"SetSchemaMetadata"}
    kafka = {c.name for c in registry.classes("transform")
             if any(a.startswith(J) for a in c.aliases)}  # fmt: skip
    assert covered == kafka
